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
    """A target from issue 5: ``value(workload results) op threshold``.

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


def _train(impl: str, file: str, vocab: int, pattern: str | None, **extra: Any) -> Spec:
    return {"job": "train", "impl": impl, "file": file, "vocab": vocab, "pattern": pattern, **extra}


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
    peers = tuple(Impl(p, _train(p, file, vocab, pattern)) for p in ("rustbpe", "hf", "bpeasy"))
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


SCORES = (
    ("frequency", "frequency"),
    ("length_weighted", {"name": "length_weighted", "alpha": 1}),
    ("pmi", {"name": "pmi", "min_count": 2}),
    ("wordpiece", {"name": "wordpiece", "min_count": 2}),
    ("likelihood_gain", {"name": "likelihood_gain", "min_count": 2}),
    ("group_frequency", "group_frequency"),
)
#: Scores whose every merge re-scores every pair (O(pairs) per merge): run on a short prefix.
GLOBAL_RESCORE = (("npmi", {"name": "npmi", "min_count": 2}),)


def workloads(quick: bool = False) -> list[Workload]:
    """Every workload, in the order the suite runs them."""
    q = quick
    en13 = "scale/en_1mb.txt" if q else "en13.txt"
    en_mix = "scale/en_2mb.txt" if q else "en_mix.txt"
    multi = "scale/multi_1mb.txt" if q else "multi_mix.txt"
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
                "tiktoken encode_batch 2 threads": "tiktoken encode_batch 1 thread",
                "hf encode_batch": "tiktoken encode_batch 1 thread",
            },
            setup=_train("bpeds", en13, v32, "gpt2", tie="smallest_ids", representation="type",
                         workers=2),
        )
    )  # fmt: skip
    # 6. Scores against Frequency.
    v6 = 2_048 if q else v32
    out.append(
        Workload(
            "wl6-scores",
            6,
            f"each shipped score on {en13} (GPT-2, vocab {v6:,}), held-out bytes/token",
            tuple(
                Impl(label, _train("bpeds", en13, v6, "gpt2", score=score, heldout=heldout))
                for label, score in SCORES
            ),
            rep(2),
            subjects=tuple(label for label, _ in SCORES[1:]),
            peers=("frequency",),
        )
    )
    v6g = 256 + (256 if q else 1_024)
    out.append(
        Workload(
            "wl6-npmi",
            6,
            f"NPMI (re-scores every pair per merge) vs Frequency on {en13}, vocab {v6g:,}",
            tuple(
                Impl(label, _train("bpeds", en13, v6g, "gpt2", score=score, heldout=heldout))
                for label, score in (SCORES[0], *GLOBAL_RESCORE)
            ),
            rep(3),
            subjects=("npmi",),
            peers=("frequency",),
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
    base = _driver(en13, v32, "gpt2", "type", "smallest_ids")
    # The default runs type mode's fused loop; any explicit Multiset (or fast_path=False)
    # runs the generic driver loop, so the heap and policy rows compare with "generic loop,
    # LazyHeap" (ThresholdCompaction). The fused loop's index lists are never extended, so
    # a compaction policy only acts in the generic loop.
    variants: list[tuple[str, Spec]] = [
        ("default (fused loop)", {}),
        ("generic loop, LazyHeap (fast_path=False)", {"fast_path": False}),
        ("generic loop, NeverCompact", {"policy": "never", "fast_path": False}),
        ("generic loop, AdaptiveCompaction", {"policy": "adaptive", "fast_path": False}),
        ("generic loop, HeapyKiYay", {"multiset": "HeapyKiYay"}),
        ("generic loop, Heapy", {"multiset": "Heapy"}),
        ("generic loop, Batched(HeapyKiYay)", {"multiset": "Batched(HeapyKiYay)"}),
        ("generic loop, HeapqMultiset", {"multiset": "HeapqMultiset"}),
        ("generic loop, SortedMultiset", {"multiset": "SortedMultiset"}),
        ("generic loop, drop_dead=False", {"fast_path": False, "drop_dead": False}),
    ]
    out.append(
        Workload(
            "wl8-type",
            8,
            f"type-mode switches on {en13} (GPT-2, vocab {v32:,}, smallest_ids)",
            tuple(Impl(label, {**base, **kw}) for label, kw in variants),
            rep(3),
            subjects=tuple(label for label, _ in variants[1:]),
            peers=(variants[0][0],),
            check="merges",
            reference=variants[0][0],
        )
    )
    small = _driver(ts, 2_000, "gpt4", "type", "smallest_ids")
    out.append(
        Workload(
            "wl8-linear",
            8,
            "heap vs linear max: taylorswift.txt, GPT-4, vocab 2,000, type mode",
            (
                Impl("generic loop, LazyHeap", {**small, "fast_path": False}),
                Impl("generic loop, HeapyKiYay", {**small, "multiset": "HeapyKiYay"}),
                Impl("generic loop, HeapqMultiset", {**small, "multiset": "HeapqMultiset"}),
                Impl(
                    "generic loop, CounterMultiset (linear max)",
                    {**small, "multiset": "CounterMultiset"},
                ),
            ),
            rep(3),
            subjects=(
                "generic loop, HeapyKiYay",
                "generic loop, HeapqMultiset",
                "generic loop, CounterMultiset (linear max)",
            ),
            peers=("generic loop, LazyHeap",),
            check="merges",
            reference="generic loop, LazyHeap",
        )
    )
    seq = _driver(ts, 10_000, None, "sequence", "leftmost")
    out.append(
        Workload(
            "wl8-sequence",
            8,
            "sequence storage: taylorswift.txt, no pattern (minbpe Basic), vocab 10,000",
            (
                Impl("arrays (SoA), fused loop", {**seq, "structure": "arrays"}),
                Impl(
                    "arrays (SoA), generic loop",
                    {**seq, "structure": "arrays", "fast_path": False},
                ),
                Impl("indexed_list (nodes), generic loop", {**seq, "structure": "indexed_list"}),
            ),
            rep(3),
            subjects=("arrays (SoA), generic loop", "indexed_list (nodes), generic loop"),
            check="merges",
            reference="arrays (SoA), fused loop",
        )
    )
    seed = {"file": en13, "vocab": 2_048 if q else 8_192}
    seed_variants = [
        ("baseline: packed, windowed, list, batched", {}),
        ("tuple keys", {"keys": "tuple"}),
        ("full recount per type", {"update": "recount"}),
        ("array('I') storage", {"storage": "array"}),
        ("direct (unbatched) deltas", {"deltas": "direct"}),
    ]
    out.append(
        Workload(
            "wl8-seed",
            8,
            f"techniques bpeds has no switch for, in ablations/seed_steps.py ({en13}, vocab "
            f"{seed['vocab']:,})",
            tuple(
                Impl(label, {**seed, **kw}, script="ablations/seed_steps.py")
                for label, kw in seed_variants
            ),
            rep(3),
            subjects=tuple(label for label, _ in seed_variants[1:]),
            peers=(seed_variants[0][0],),
            check="merges",
            reference=seed_variants[0][0],
        )
    )
    return out


TARGETS = (
    Target("wl2-rustbpe", "wl2-en13", "bpeds w=2", "rustbpe", "wall_job", "ratio", "<=", 1.0,
           "wl2 wall <= 1.0x rustbpe"),
    Target("wl2-hf", "wl2-en13", "bpeds w=2", "hf", "wall_job", "ratio", "<=", 0.5,
           "wl2 wall <= 0.5x HF"),
    Target("wl3-rustbpe", "wl3-en62", "bpeds w=2", "rustbpe", "wall_job", "ratio", "<=", 1.0,
           "wl3 wall <= 1.0x rustbpe"),
    Target("wl3-rss", "wl3-en62", "bpeds w=2", "hf", "rss", "ratio", "<=", 1.0,
           "wl3 peak RSS <= HF's"),
    Target("wl1-basic", "wl1-taylorswift", "bpeds basic", None, "cpu_job", "absolute", "<=",
           0.4, "wl1 taylorswift 10k minbpe-basic <= 0.4 CPU-s"),
    Target("wl1-regex", "wl1-taylorswift", "bpeds regex", None, "cpu_job", "absolute", "<=",
           0.4, "wl1 taylorswift 10k minbpe-regex <= 0.4 CPU-s"),
    Target("wl5-encode", "wl5-encode", "bpeds encode", "tiktoken encode", "wall_job", "speed",
           ">=", 0.75, "wl5 encode, one process >= 0.75x tiktoken (one thread)"),
    Target("wl5-batch", "wl5-encode", "bpeds encode_batch w=2", "tiktoken encode_batch 1 thread",
           "wall_job", "speed", ">=", 1.2, "wl5 encode_batch, 2 processes >= 1.2x tiktoken (one "
           "thread)"),
    Target("wl5-hf", "wl5-encode", "bpeds encode_batch w=2", "hf encode_batch", "wall_job",
           "speed", ">=", 5.0, "wl5 encode_batch, 2 processes >= 5x HF encode_batch"),
    Target("wl6-pmi", "wl6-scores", "pmi", "frequency", "cpu_job", "ratio", "<=", 2.0,
           "wl6 PARTS-class (PMI) <= 2x Frequency"),
    Target("wl6-wordpiece", "wl6-scores", "wordpiece", "frequency", "cpu_job", "ratio", "<=", 2.0,
           "wl6 PARTS-class (WordPiece) <= 2x Frequency"),
    Target("wl7-scale", "wl7-scaling", "bpeds 8 MB", "bpeds 62 MB", "cpu_job", "scale", "<=",
           1.3, "wl7 cost/MB at 62 MB within 1.3x of 8 MB"),
)  # fmt: skip
