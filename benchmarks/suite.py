"""The workloads of the benchmark suite and the targets they are read against.

Each :class:`Workload` is a set of implementations (:class:`Impl`: a label
and a job spec for ``jobs.py`` or another child script) that run side by side,
alternating, in fresh processes. ``workloads(quick=...)`` builds them; with
``quick`` every workload shrinks (smaller files and vocabularies, one run) to a
smoke test of the whole pipeline in about two minutes; its numbers mean nothing.

File names in specs (``file``, ``heldout``) are relative to the corpus folder
(``get_corpora.py`` builds it); ``model`` names a file the workload's setup
step writes. Not handled here: running (``run.py``), tables and plots
(``report.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Spec = dict[str, Any]

#: Corpus sizes of the scaling workload (MB); 62 is the whole ``en_interleaved.txt``.
SCALE_MB = (1, 2, 4, 8, 16, 32, 62)
QUICK_SCALE_MB = (1, 2, 4)


def scale_file(mb: int) -> str:
    """The first ``mb`` MB of the interleaved English mix (``get_corpora.py`` writes them)."""
    return "en_interleaved.txt" if mb == 62 else f"scale/en_{mb}mb.txt"


@dataclass(frozen=True)
class Impl:
    """One implementation (or variant) of a workload: a label and its child's job spec."""

    label: str
    spec: Spec
    script: str = "jobs.py"


@dataclass(frozen=True)
class Workload:
    """Implementations measured side by side, alternating, ``repeat`` times each.

    ``subjects``: the labels whose ratios against the other implementations
    are reported (bpeds' rows; a subject is not compared with the subjects
    listed before it, which would only invert a ratio already shown; only
    against ``peers`` if given).
    ``check``: ``"merges"`` (merge lists compared with ``reference``'s, within
    each repetition; only those of ``compared`` if given) or ``"digest"``
    (encoded ids compared as ``digest_groups`` says: label -> its reference).
    ``setup``: a training spec whose tokenizer the jobs load as ``model``.
    """

    name: str
    part: int
    title: str
    impls: tuple[Impl, ...]
    repeat: int
    subjects: tuple[str, ...]
    check: str | None = None
    reference: str | None = None
    compared: tuple[str, ...] = ()
    peers: tuple[str, ...] = ()
    digest_groups: dict[str, str] = field(default_factory=dict)
    setup: Spec | None = None
    notes: str = ""

    def files(self) -> list[str]:
        names = [i.spec[k] for i in self.impls for k in ("file", "heldout") if i.spec.get(k)]
        if self.setup:
            names.append(self.setup["file"])
        return sorted(set(names))


@dataclass(frozen=True)
class Target:
    """A target the suite is read against: ``value(workload results) op threshold``.

    ``kind``: ``"ratio"`` (median within-repetition ratio subject/peer of
    ``metric``), ``"speed"`` (peer time / subject time: above 1 the subject is
    faster), ``"absolute"`` (the subject's median ``metric``) or ``"scale"``
    (cost per MB at ``peer`` MB over cost per MB at ``subject`` MB).
    """

    name: str
    workload: str
    subject: str
    peer: str | None
    metric: str
    kind: str
    op: str  # "<=" or ">="
    threshold: float
    text: str


def _train(impl: str, file: str | None, vocab: int, pattern: str | None, **extra: Any) -> Spec:
    return {"job": "train", "impl": impl, "file": file, "vocab": vocab, "pattern": pattern, **extra}


#: The training peers: merges of the first three are checked against rustbpe's; sentencepiece
#: pre-tokenizes its own way (no pattern), so its row is time and memory only.
PEERS = ("rustbpe", "hf", "bpeasy", "sentencepiece")


def _peers_train(
    file: str, vocab: int, pattern: str, *, bpeds_workers: tuple[int, ...] = (2, 1)
) -> tuple[Impl, ...]:
    bpeds = tuple(
        Impl(
            f"bpeds w={w}",
            _train("bpeds", file, vocab, pattern, tie="smallest_ids", representation="type",
                   workers=w),
        )
        for w in bpeds_workers
    )  # fmt: skip
    peers = tuple(Impl(p, _train(p, file, vocab, pattern)) for p in PEERS)
    return bpeds + peers


def _driver(file: str, vocab: int, pattern: str | None, mode: str, tie: str, **kw: Any) -> Spec:
    return {
        "job": "driver",
        "file": file,
        "vocab": vocab,
        "pattern": pattern,
        "mode": mode,
        "tie": tie,
        **kw,
    }


#: Groups of ``group_frequency`` (a score that needs at least two): line ``i`` of the
#: file in group ``i % GROUPS`` (``jobs.split_groups``), so every group is the same mix
#: of text.
GROUPS = 4
#: The user-written score: ``benchmarks/user_scores.py``, imported by name in the child.
USER_SCORE = "length_weighted (user @score_function)"

#: wl6: (label, score spec, extra job spec). Frequency first: the others are read
#: against its whole job.
SCORES: tuple[tuple[str, Any, Spec], ...] = (
    ("frequency", "frequency", {}),
    ("length_weighted", {"name": "length_weighted", "alpha": 1}, {}),
    (USER_SCORE, "user_scores:length_weighted", {}),
    ("pmi", {"name": "pmi", "min_count": 2}, {}),
    ("wordpiece", {"name": "wordpiece", "min_count": 2}, {}),
    ("likelihood_gain", {"name": "likelihood_gain", "min_count": 2}, {}),
    (f"group_frequency ({GROUPS} groups)", "group_frequency", {"groups": GROUPS}),
    ("npmi", {"name": "npmi", "min_count": 2}, {}),
)

#: wl9: sizes (bytes) of the inputs without split points; 4x apart for the targets.
UNSPLIT_BYTES = (250_000, 500_000, 1_000_000, 2_000_000)
QUICK_UNSPLIT_BYTES = (62_500, 125_000, 250_000, 500_000)
#: wl9: the kinds of input without split points (``derive`` of ``jobs.py``).
#: ``text`` is made from workload 2's file (``en13``), ``dna`` from nothing.
UNSPLIT_KINDS = (
    ("dna", {"kind": "dna", "seed": 0}, False),
    ("text", {"kind": "unsplit"}, True),
)


def size_label(n: int) -> str:
    """``250 KB``, ``1 MB``, ``62.5 KB`` (decimal units, as the corpus sizes)."""
    return f"{n / 1e6:g} MB" if n >= 1_000_000 else f"{n / 1e3:g} KB"


def workloads(quick: bool = False) -> list[Workload]:
    """Every workload, in the order the suite runs them."""
    q = quick
    en13 = "scale/en_1mb.txt" if q else "en13.txt"
    en_mix = "scale/en_2mb.txt" if q else "en_mix.txt"
    multi = "scale/multi_1mb.txt" if q else "multi_mix.txt"
    mixed = "scale/multi_1mb.txt" if q else "mixed.txt"
    heldout = "en_heldout.txt"
    v32, v64 = (4_096, 4_096) if q else (32_768, 65_536)
    out: list[Workload] = []

    def rep(n: int) -> int:
        return 1 if q else n

    # 1. minbpe-exact presets.
    ts = "taylorswift.txt"
    out.append(
        Workload(
            "wl1-taylorswift",
            1,
            "taylorswift.txt, vocab 10,000, minbpe-exact presets",
            (
                Impl("bpeds basic", _train("bpeds", ts, 10_000, None, preset="minbpe-basic")),
                Impl("bpeds regex", _train("bpeds", ts, 10_000, "gpt4", preset="minbpe-regex")),
                Impl("rustbpe (gpt4)", _train("rustbpe", ts, 10_000, "gpt4")),
            ),
            rep(9),
            subjects=("bpeds regex",),
            check="merges",
            reference="bpeds regex",
            compared=("rustbpe (gpt4)",),
            peers=("rustbpe (gpt4)",),
            notes="rustbpe breaks ties by smallest ids, not minbpe's leftmost: a reference only.",
        )
    )
    proust_vocab = 10_000 if q else 100_000
    out.append(
        Workload(
            "wl1-proust",
            1,
            f"Proust (0300511.txt), vocab {proust_vocab:,}, minbpe-basic",
            (
                Impl(
                    "bpeds basic",
                    _train("bpeds", "0300511.txt", proust_vocab, None, preset="minbpe-basic"),
                ),
            ),
            rep(3),
            subjects=(),
        )
    )
    # 2-4. Type-mode training against the peers.
    for name, part, file, vocab, pattern, n, title in (
        ("wl2-en13", 2, en13, v32, "gpt2", 5, "en13.txt (13 MB English), GPT-2, vocab 32,768"),
        ("wl3-en62", 3, en_mix, v64, "gpt2", 3, "en_mix.txt (62 MB English), GPT-2, vocab 65,536"),
        ("wl4-multi", 4, multi, v64, "gpt4", 2, "multi_mix.txt (17 MB, 5 scripts), GPT-4, 65,536"),
        ("wl4-mixed", 4, mixed, v32, "gpt4", 1, "mixed.txt (108 MB, 3 kinds), GPT-4, 32,768"),
    ):
        out.append(
            Workload(
                name,
                part,
                title,
                _peers_train(file, vocab, pattern, bpeds_workers=(2,) if part == 4 else (2, 1)),
                rep(n),
                subjects=("bpeds w=2", "bpeds w=1") if part != 4 else ("bpeds w=2",),
                check="merges",
                reference="rustbpe",
            )
        )
    # Reading, splitting and counting alone (what bpeds.train does before merging), the
    # split with the ASCII fast path (the default) against the regex module's alone, on
    # workload 2's input and on the multilingual one (where the fast path mostly steps aside).
    for name, part, file, pattern, title in (
        ("wl2-split", 2, en13, "gpt2", f"read, split and count {en13} (GPT-2), one process"),
        ("wl4-split", 4, multi, "gpt4", f"read, split and count {multi} (GPT-4), one process"),
    ):
        split = {"job": "split", "file": file, "pattern": pattern}
        out.append(
            Workload(
                name,
                part,
                title,
                (
                    Impl("bpeds split", split),
                    Impl("bpeds split (regex only)", {**split, "split": "regex"}),
                ),
                rep(5),
                subjects=("bpeds split",),
                check="digest",
                digest_groups={"bpeds split": "bpeds split (regex only)"},
                notes="regex only: the regex module's findall everywhere and long texts counted "
                "by the segmenter, without the ASCII fast path; the counts (and their order) "
                "are compared every repetition.",
            )
        )
    # 5. Encoding with the workload-2 vocabulary.
    enc = {"job": "encode", "file": en13, "model": "model", "doc_chars": 10_000}
    out.append(
        Workload(
            "wl5-encode",
            5,
            "encode en13.txt with the workload-2 vocabulary (GPT-2 pattern)",
            (
                Impl("bpeds encode", {**enc, "impl": "bpeds"}),
                Impl("bpeds encode_batch w=2", {**enc, "impl": "bpeds-batch", "workers": 2}),
                Impl("bpeds encode (regex only)", {**enc, "impl": "bpeds", "split": "regex"}),
                Impl("bpeds encode_batch w=2 (regex only)", {**enc, "impl": "bpeds-batch",
                                                             "workers": 2, "split": "regex"}),
                Impl("tiktoken encode", {**enc, "impl": "tiktoken"}),
                Impl("tiktoken encode_batch 1 thread", {**enc, "impl": "tiktoken-batch",
                                                        "threads": 1}),
                Impl("tiktoken encode_batch 2 threads", {**enc, "impl": "tiktoken-batch",
                                                         "threads": 2}),
                Impl("hf encode_batch", {**enc, "impl": "hf-batch"}),
            ),
            rep(3),
            subjects=("bpeds encode", "bpeds encode_batch w=2"),
            check="digest",
            digest_groups={
                "bpeds encode": "tiktoken encode",
                "bpeds encode_batch w=2": "tiktoken encode_batch 1 thread",
                "bpeds encode (regex only)": "tiktoken encode",
                "bpeds encode_batch w=2 (regex only)": "tiktoken encode_batch 1 thread",
                "tiktoken encode_batch 2 threads": "tiktoken encode_batch 1 thread",
                "hf encode_batch": "tiktoken encode_batch 1 thread",
            },
            setup=_train("bpeds", en13, v32, "gpt2", tie="smallest_ids", representation="type",
                         workers=2),
        )
    )  # fmt: skip
    # 5b. Encoding with the GPT-4 pattern (the one most users pick), from a fresh tokenizer
    # (cold caches, as a user's first call), warm-cache rows beside them labelled as such.
    gpt4 = {**enc, "model": "model", "fresh": True}
    warm = {**gpt4, "fresh": False, "warm_text": True}
    out.append(
        Workload(
            "wl5-encode-gpt4",
            5,
            "encode en13.txt, GPT-4 pattern, vocab 32,768, fresh tokenizers",
            (
                Impl("bpeds encode fresh", {**gpt4, "impl": "bpeds"}),
                Impl("tiktoken encode fresh", {**gpt4, "impl": "tiktoken"}),
                Impl("bpeds encode_batch w=2 fresh", {**gpt4, "impl": "bpeds-batch",
                                                      "workers": 2}),
                Impl("tiktoken encode_batch 2 threads fresh", {**gpt4, "impl": "tiktoken-batch",
                                                               "threads": 2}),
                Impl("bpeds encode warm", {**warm, "impl": "bpeds"}),
                Impl("tiktoken encode warm", {**warm, "impl": "tiktoken"}),
            ),
            rep(3),
            subjects=("bpeds encode fresh", "bpeds encode_batch w=2 fresh", "bpeds encode warm"),
            check="digest",
            digest_groups={
                "bpeds encode fresh": "tiktoken encode fresh",
                "bpeds encode_batch w=2 fresh": "tiktoken encode fresh",
                "tiktoken encode_batch 2 threads fresh": "tiktoken encode fresh",
                "bpeds encode warm": "tiktoken encode fresh",
                "tiktoken encode warm": "tiktoken encode fresh",
            },
            setup=_train("bpeds", en13, v32, "gpt4", tie="smallest_ids", representation="type",
                         workers=2),
            notes="fresh: each job loads the model and encodes once, nothing warmed; warm: "
            "the same text encoded once before the timed call (every cache warm).",
        )
    )  # fmt: skip
    # 6. Scores against Frequency's whole job.
    v6 = 2_048 if q else v32
    out.append(
        Workload(
            "wl6-scores",
            6,
            f"shipped scores and a user-written one on {en13} (GPT-2, vocab {v6:,}), "
            "held-out bytes/token",
            tuple(
                Impl(label, _train("bpeds", en13, v6, "gpt2", score=score, heldout=heldout, **kw))
                for label, score, kw in SCORES
            ),
            rep(2),
            subjects=tuple(label for label, _, _ in SCORES[1:]),
            peers=("frequency",),
            notes=f"group_frequency: line i of the file in group i % {GROUPS} (the same mix "
            "of text in every group); the others train on the file whole.",
        )
    )
    # 7. Scaling.
    sizes = QUICK_SCALE_MB if q else SCALE_MB
    out.append(
        Workload(
            "wl7-scaling",
            7,
            f"training time and peak memory vs corpus size (English mix, GPT-2, vocab {v32:,})",
            tuple(
                Impl(f"{impl} {mb} MB", _train(impl, scale_file(mb), v32, "gpt2", **kw))
                for mb in sizes
                for impl, kw in (
                    ("bpeds", {"tie": "smallest_ids", "representation": "type", "workers": 1}),
                    ("rustbpe", {}),
                )
            ),
            rep(3),
            subjects=(),
        )
    )
    # 8. Ablations (exact variants: every one must give the baseline's merges).
    # Selection structure: the driver's BoundHeap (parked low bounds), or a Multiset
    # through MultisetBounds (``multiset=``; ``drop_dead`` only acts there). On
    # workload 2's input (type mode, the strings representation).
    base = _driver(en13, v32, "gpt2", "type", "smallest_ids")
    variants: list[tuple[str, Spec]] = [
        ("BoundHeap (default)", {}),
        ("MultisetBounds(HeapyKiYay)", {"multiset": "HeapyKiYay"}),
        ("MultisetBounds(Heapy)", {"multiset": "Heapy"}),
        ("MultisetBounds(LazyHeap)", {"multiset": "LazyHeap"}),
        ("MultisetBounds(Batched(HeapyKiYay))", {"multiset": "Batched(HeapyKiYay)"}),
        ("MultisetBounds(HeapqMultiset)", {"multiset": "HeapqMultiset"}),
        ("MultisetBounds(SortedMultiset)", {"multiset": "SortedMultiset"}),
        (
            "MultisetBounds(HeapyKiYay), drop_dead=False",
            {"multiset": "HeapyKiYay", "drop_dead": False},
        ),
    ]
    out.append(
        Workload(
            "wl8-type",
            8,
            f"selection structure, type mode on {en13} (GPT-2, vocab {v32:,}, smallest_ids)",
            tuple(Impl(label, {**base, **kw}) for label, kw in variants),
            rep(3),
            subjects=tuple(label for label, _ in variants[1:]),
            peers=(variants[0][0],),
            check="merges",
            reference=variants[0][0],
        )
    )
    # Compaction policies of the LazyIndex (pair -> types). Overlapping counts below
    # CHAR_IDS never use it (the strings representation has its own index); the
    # recount path of non-overlapping counts does, so these rows count that way.
    nonover = _driver(en13, v32, "gpt2", "type", "smallest_ids", counting="non_overlapping")
    policies = [
        ("ThresholdCompaction (default)", {}),
        ("NeverCompact", {"policy": "never"}),
        ("AdaptiveCompaction", {"policy": "adaptive"}),
    ]
    out.append(
        Workload(
            "wl8-compaction",
            8,
            f"compaction policy of the pair index: non-overlapping counts on {en13} (GPT-2, "
            f"vocab {v32:,})",
            tuple(Impl(label, {**nonover, **kw}) for label, kw in policies),
            rep(3),
            subjects=tuple(label for label, _ in policies[1:]),
            peers=(policies[0][0],),
            check="merges",
            reference=policies[0][0],
        )
    )
    small = _driver(ts, 2_000, "gpt4", "type", "smallest_ids")
    linear = [
        ("BoundHeap (default)", {}),
        ("MultisetBounds(LazyHeap)", {"multiset": "LazyHeap"}),
        ("MultisetBounds(HeapyKiYay)", {"multiset": "HeapyKiYay"}),
        ("MultisetBounds(HeapqMultiset)", {"multiset": "HeapqMultiset"}),
        ("MultisetBounds(CounterMultiset) (linear max)", {"multiset": "CounterMultiset"}),
    ]
    out.append(
        Workload(
            "wl8-linear",
            8,
            "heap vs linear max: taylorswift.txt, GPT-4, vocab 2,000, type mode",
            tuple(Impl(label, {**small, **kw}) for label, kw in linear),
            rep(3),
            subjects=tuple(label for label, _ in linear[1:]),
            peers=(linear[0][0],),
            check="merges",
            reference=linear[0][0],
        )
    )
    # Corpus representation, with a pattern (many short chunks): type mode against
    # both storages of sequence mode.
    rep_file, rep_vocab = "scale/en_1mb.txt", 2_048 if q else 8_192
    reps_spec = _driver(rep_file, rep_vocab, "gpt2", "type", "smallest_ids")
    representations = [
        ("TypeCorpus (type mode, default)", {}),
        ("SequenceCorpus arrays", {"mode": "sequence", "structure": "arrays"}),
        ("SequenceCorpus indexed_list", {"mode": "sequence", "structure": "indexed_list"}),
        ("SequenceCorpus leap", {"mode": "sequence", "structure": "leap"}),
    ]
    out.append(
        Workload(
            "wl8-representation",
            8,
            f"corpus representation: {rep_file}, GPT-2, vocab {rep_vocab:,}, smallest_ids",
            tuple(Impl(label, {**reps_spec, **kw}) for label, kw in representations),
            rep(3),
            subjects=tuple(label for label, _ in representations[1:]),
            peers=(representations[0][0],),
            check="merges",
            reference=representations[0][0],
        )
    )
    seq = _driver(ts, 10_000, None, "sequence", "leftmost")
    out.append(
        Workload(
            "wl8-sequence",
            8,
            "sequence storage: taylorswift.txt, no pattern (minbpe Basic), vocab 10,000",
            (
                Impl("SequenceCorpus arrays", {**seq, "structure": "arrays"}),
                Impl("SequenceCorpus indexed_list", {**seq, "structure": "indexed_list"}),
                Impl("SequenceCorpus leap", {**seq, "structure": "leap"}),
            ),
            rep(3),
            subjects=("SequenceCorpus indexed_list", "SequenceCorpus leap"),
            check="merges",
            reference="SequenceCorpus arrays",
            notes="No type-mode row: the one 185 KB chunk with the leftmost tie takes minutes "
            "there (wl9 measures type mode on long chunks, with smallest_ids).",
        )
    )
    trainer = {"file": en13, "vocab": 2_048 if q else 8_192}
    trainer_variants = [
        ("baseline: packed, windowed, list, batched", {}),
        ("tuple keys", {"keys": "tuple"}),
        ("full recount per type", {"update": "recount"}),
        ("array('I') storage", {"storage": "array"}),
        ("direct (unbatched) deltas", {"deltas": "direct"}),
    ]
    out.append(
        Workload(
            "wl8-trainer",
            8,
            f"techniques bpeds has no switch for, in ablations/type_trainer.py ({en13}, vocab "
            f"{trainer['vocab']:,})",
            tuple(
                Impl(label, {**trainer, **kw}, script="ablations/type_trainer.py")
                for label, kw in trainer_variants
            ),
            rep(3),
            subjects=tuple(label for label, _ in trainer_variants[1:]),
            peers=(trainer_variants[0][0],),
            check="merges",
            reference=trainer_variants[0][0],
        )
    )
    # 9. Long input without split points: type mode (one chunk), default options.
    unsplit = [
        (f"{kind} {size_label(n)}", en13 if from_file else None, {**derive, "bytes": n})
        for kind, derive, from_file in UNSPLIT_KINDS
        for n in (QUICK_UNSPLIT_BYTES if q else UNSPLIT_BYTES)
    ]
    out.append(
        Workload(
            "wl9-unsplit",
            9,
            "input without split points (pattern=None: one chunk), type mode, vocab 556, "
            "at 4 sizes",
            tuple(
                Impl(label, _train("bpeds", file, 556, None, derive=derive))
                for label, file, derive in unsplit
            ),
            rep(5),
            subjects=(),
            notes="dna: letters ACGT from a seeded random generator; text: the first bytes "
            f"of {en13} with every whitespace character removed.",
        )
    )
    # 10. Loop variants and continued training against plain BPE.
    v10 = 2_048 if q else v32
    out.append(
        Workload(
            "wl10-variants",
            10,
            f"loop variants vs plain BPE on {en13} (GPT-2, vocab {v10:,})",
            tuple(
                Impl(label, _train("bpeds", en13, v10, "gpt2", tie="smallest_ids",
                                   heldout=heldout, **kw))
                for label, kw in VARIANTS
            ),
            rep(2),
            subjects=tuple(label for label, _ in VARIANTS[1:]),
            peers=("frequency",),
            notes="picky: threshold 0.9; scaffold: the paper's rule; superbpe: the second "
            "stage from 80% of the merges, at most 4 words per token.",
        )
    )  # fmt: skip
    v10c = v10 + (512 if q else 8_192)
    out.append(
        Workload(
            "wl10-continue",
            10,
            f"continued training {v10:,} -> {v10c:,} on {en13} vs training {v10c:,} from scratch",
            (
                Impl("continue",
                     _train("bpeds", en13, v10c, "gpt2", tie="smallest_ids", model="model")),
                Impl("scratch", _train("bpeds", en13, v10c, "gpt2", tie="smallest_ids")),
            ),
            rep(2),
            subjects=("continue",),
            peers=("scratch",),
            setup=_train("bpeds", en13, v10, "gpt2", tie="smallest_ids", representation="type",
                         workers=2),
            notes="both read and count the whole file; the continued run starts from the "
            "setup's tokenizer (trained on the same file), so its merges equal the scratch "
            "run's.",
        )
    )  # fmt: skip
    return out


#: wl10: (label, bpeds.train options) per loop variant; plain BPE first.
VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("frequency", {}),
    ("picky", {"variant": {"name": "picky", "threshold": 0.9}}),
    ("scaffold", {"variant": "scaffold"}),
    ("superbpe", {"variant": {"name": "superbpe", "transition": 0.8}}),
)


TARGETS = (
    Target("wl2-rustbpe", "wl2-en13", "bpeds w=2", "rustbpe", "wall_job", "ratio", "<=", 1.0,
           "wl2 wall <= 1.0x rustbpe"),
    Target("wl2-hf", "wl2-en13", "bpeds w=2", "hf", "wall_job", "ratio", "<=", 0.5,
           "wl2 wall <= 0.5x HF"),
    Target("wl3-rustbpe", "wl3-en62", "bpeds w=2", "rustbpe", "wall_job", "ratio", "<=", 1.0,
           "wl3 wall <= 1.0x rustbpe"),
    Target("wl4-mixed-rustbpe", "wl4-mixed", "bpeds w=2", "rustbpe", "wall_job", "ratio", "<=",
           1.0, "wl4 mixed 108 MB, every core, wall <= 1.0x rustbpe"),
    Target("wl3-rss", "wl3-en62", "bpeds w=2", "hf", "rss", "ratio", "<=", 1.0,
           "wl3 peak RSS <= HF's"),
    Target("wl1-basic", "wl1-taylorswift", "bpeds basic", None, "cpu_job", "absolute", "<=",
           0.4, "wl1 taylorswift 10k minbpe-basic <= 0.4 CPU-s"),
    Target("wl1-regex", "wl1-taylorswift", "bpeds regex", None, "cpu_job", "absolute", "<=",
           0.4, "wl1 taylorswift 10k minbpe-regex <= 0.4 CPU-s"),
    Target("wl2-split", "wl2-split", "bpeds split", None, "cpu_job", "absolute", "<=", 0.8,
           "wl2 read, split and count en13.txt <= 0.8 CPU-s"),
    Target("wl4-split", "wl4-split", "bpeds split", "bpeds split (regex only)", "cpu_job",
           "ratio", "<=", 1.05, "wl4 multilingual split and count no slower than the regex "
           "module alone (within 5%: the noise of a run)"),
    Target("wl5-encode", "wl5-encode", "bpeds encode", "tiktoken encode", "wall_job", "speed",
           ">=", 0.75, "wl5 encode, one process >= 0.75x tiktoken (one thread)"),
    Target("wl5-batch", "wl5-encode", "bpeds encode_batch w=2", "tiktoken encode_batch 1 thread",
           "wall_job", "speed", ">=", 1.2, "wl5 encode_batch, 2 processes >= 1.2x tiktoken (one "
           "thread)"),
    Target("wl5-gpt4", "wl5-encode-gpt4", "bpeds encode fresh", "tiktoken encode fresh",
           "wall_job", "speed", ">=", 0.75, "wl5 GPT-4 pattern, fresh tokenizers, one process "
           ">= 0.75x tiktoken (one thread)"),
    Target("wl5-gpt4-batch", "wl5-encode-gpt4", "bpeds encode_batch w=2 fresh",
           "tiktoken encode_batch 2 threads fresh", "wall_job", "speed", ">=", 0.75,
           "wl5 GPT-4 pattern, fresh tokenizers, every core >= 0.75x tiktoken's threads"),
    Target("wl5-hf", "wl5-encode", "bpeds encode_batch w=2", "hf encode_batch", "wall_job",
           "speed", ">=", 5.0, "wl5 encode_batch, 2 processes >= 5x HF encode_batch"),
    Target("wl6-length_weighted", "wl6-scores", "length_weighted", "frequency", "cpu_job",
           "ratio", "<=", 1.2, "wl6 LengthWeighted (a PAIR score, int) <= 1.2x Frequency's job"),
    Target("wl6-user", "wl6-scores", USER_SCORE, "frequency", "cpu_job", "ratio", "<=", 1.5,
           "wl6 a user's PAIR score (@score_function, declared priority=\"int\" and "
           "count_fall_raises=False) <= 1.5x Frequency's job"),
    Target("wl6-pmi", "wl6-scores", "pmi", "frequency", "cpu_job", "ratio", "<=", 2.0,
           "wl6 PMI (PARTS) <= 2x Frequency's job"),
    Target("wl6-wordpiece", "wl6-scores", "wordpiece", "frequency", "cpu_job", "ratio", "<=", 2.0,
           "wl6 WordPiece (PARTS) <= 2x Frequency's job"),
    Target("wl6-likelihood_gain", "wl6-scores", "likelihood_gain", "frequency", "cpu_job",
           "ratio", "<=", 2.0, "wl6 LikelihoodGain (GLOBAL) <= 2x Frequency's job"),
    Target("wl6-npmi", "wl6-scores", "npmi", "frequency", "cpu_job", "ratio", "<=", 5.0,
           "wl6 NPMI (GLOBAL, epochs) trains the full vocabulary in <= 5x Frequency's job"),
    Target("wl6-group_frequency", "wl6-scores", SCORES[-2][0], "frequency", "cpu_job",
           "ratio", "<=", 2.0, f"wl6 GroupFrequency (GLOBAL, {GROUPS} groups) <= 2x Frequency's "
           "job"),
    Target("wl10-picky", "wl10-variants", "picky", "frequency", "cpu_job", "ratio", "<=", 2.0,
           "wl10 Picky BPE <= 2x plain BPE's job"),
    Target("wl10-scaffold", "wl10-variants", "scaffold", "frequency", "cpu_job", "ratio", "<=",
           2.0, "wl10 Scaffold-BPE <= 2x plain BPE's job"),
    Target("wl10-superbpe", "wl10-variants", "superbpe", "frequency", "cpu_job", "ratio", "<=",
           3.0, "wl10 SuperBPE (second stage from 80%) <= 3x plain BPE's job"),
    Target("wl10-continue", "wl10-continue", "continue", "scratch",
           "cpu_job", "ratio", "<=", 1.0, "wl10 continued training 32,768 -> 40,960 no slower "
           "than 40,960 from scratch"),
    Target("wl7-scale", "wl7-scaling", "bpeds 8 MB", "bpeds 62 MB", "cpu_job", "scale", "<=",
           1.3, "wl7 cost/MB at 62 MB within 1.3x of 8 MB"),
    *(
        # 4x the input costs at most 5x the time: cost/MB within 5/4 = 1.25x.
        Target(f"wl9-{kind}-{size_label(small).replace(' ', '')}", "wl9-unsplit",
               f"{kind} {size_label(small)}", f"{kind} {size_label(4 * small)}", "cpu_job",
               "scale", "<=", 1.25,
               f"wl9 {kind} without split points: 4x the input ({size_label(small)} -> "
               f"{size_label(4 * small)}) costs <= 5x the time (cost/MB within 1.25x)")
        for kind, _, _ in UNSPLIT_KINDS
        for small in UNSPLIT_BYTES[:2]
    ),
)  # fmt: skip
