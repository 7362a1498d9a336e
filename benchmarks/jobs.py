"""One measured job, run in a fresh child process by ``run.py``.

Usage (the runner does this; by hand only to debug or profile one job)::

    python benchmarks/jobs.py '{"job": "train", "impl": "bpeds", "file": "...", ...}'
    python benchmarks/jobs.py --profile 25 SPEC    # cProfile, top 25 by own time, on stderr

The argument is a JSON *spec*; the child runs it and prints one JSON object on
its last stdout line: the job's timings (``wall_job``/``cpu_job``: wall and CPU
seconds of the measured part, from ``perf_counter``/``process_time``, all
threads), its own peak RSS (``VmHWM``, see ``_common.py``) and what the parent
checks (merge lists are written to ``spec["out"]``, encodings are reported as
digests).

Jobs (``spec["job"]``):

- ``train``: a whole training job, read file -> merges. ``impl``: ``bpeds``
  (the public :func:`bpeds.train` on a ``Path``; the phases are timed with a
  progress object), ``rustbpe``, ``hf`` (``tokenizers`` BpeTrainer, byte
  level), ``bpeasy`` or ``sentencepiece`` (BPE with byte fallback on the file's
  lines; it splits text its own way, so its merges are not compared). The other
  peers get the file's text in pieces cut only where cutting cannot change a
  GPT-2/GPT-4 split (after a newline between two non-space characters, the rule
  :mod:`bpeds.tokenizer.io` uses), so that the
  multi-threaded ones can use both cores and every implementation splits the
  same pre-tokens. With ``heldout``, the trained bpeds tokenizer then encodes
  that file (untimed) and the job reports bytes per token; with ``save``, it
  is saved there (untimed). bpeds only: ``groups`` (an int ``k``) gives
  ``bpeds.train`` the mapping ``{"g0": path, ..., "g<k-1>": path}`` of ``k``
  files, line ``i`` of ``file`` in group ``i % k``; ``derive`` trains on a
  file made from ``file`` (``{"kind": "unsplit", "bytes": N}``: its first
  ``N`` bytes once every whitespace character is removed) or from nothing
  (``{"kind": "dna", "bytes": N, "seed": S}``: ``N`` letters ``ACGT`` from
  ``random.Random(S)``). Those files are written to a temporary folder before
  the job is timed, and ``mb`` is the size of what was trained on.
- ``encode``: encode a text file with a saved bpeds model. ``impl``: ``bpeds``
  (``Tokenizer.encode``), ``bpeds-batch`` (``encode_batch``, ``workers``
  processes), ``tiktoken`` (``Encoding.encode``), ``tiktoken-batch``
  (``encode_batch``, ``threads``), ``hf-batch`` (``tokenizers``
  ``encode_batch``, its own thread pool). Only the encoding call is timed; the
  tokenizer is built and warmed first, unless ``fresh`` (then the call starts
  from a tokenizer that has encoded nothing: cold caches, as a user's first call);
  with ``warm_text``, the text is encoded once, untimed, before the timed call.
- ``split``: read, split and count a file as :func:`bpeds.train` does before
  merging (``bpeds.tokenizer.io.iter_segments`` on the ``Path``, then
  ``bpeds.tokenizer.training.count_pieces``, one process), GPT pattern ``pattern``;
  reports a digest of the counts in their (first-appearance) order.
- ``driver``: the lower layers for ablations: ``count_pieces`` then a
  ``TypeCorpus`` (``mode: "type"``, with the given compaction ``policy``) or a
  ``SequenceCorpus`` (``mode: "sequence"``, with the given ``structure``), and
  a ``MergeDriver`` with the given ``counting``, ``drop_dead`` and selection
  structure (``multiset``: ``"default"``, the driver's ``BoundHeap``, or a
  Multiset class name of :mod:`bpeds.structures`, used through
  ``MultisetBounds``). ``prep`` (split, count, build the corpus) and
  ``merge`` (the driver) are timed separately.

Any bpeds job with ``"split": "regex"`` splits as bpeds did before its ASCII
fast path (:mod:`bpeds.tokenizer.fastsplit`): the ``regex`` module's ``findall`` of the
pattern everywhere, and long texts counted by the segmenter. Set before
anything is built, so worker processes (forked) split that way too.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import resource
import sys
import tempfile
import time
import warnings
from array import array
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from _common import ChildTimer, peak_rss_mib

Spec = dict[str, Any]
Report = dict[str, Any]

# A cut after a newline that has a non-space character on each side changes no
# GPT-2/GPT-4/GPT-4o split unless a "/" follows (see bpeds.tokenizer.io): the pieces split
# exactly as the whole.
_EXACT_CUT = re.compile(r"\S\n(?=[^\s/])")


def exact_pieces(text: str, size: int = 1 << 20) -> list[str]:
    """``text`` cut into pieces of about ``size`` characters at exact cut points.

    >>> exact_pieces("ab\\ncd\\nef", 2)
    ['ab\\n', 'cd\\n', 'ef']
    """
    out: list[str] = []
    start = 0
    n = len(text)
    while start < n:
        m = _EXACT_CUT.search(text, start + size - 1) if start + size < n else None
        end = n if m is None else m.end()
        out.append(text[start:end])
        start = end
    return out


def documents(text: str, size: int) -> list[str]:
    """``text`` cut at blank lines into documents of at least ``size`` characters.

    >>> documents("a\\n\\nb\\n\\nc", 2)
    ['a\\n\\nb\\n\\n', 'c']
    """
    out: list[str] = []
    start = 0
    n = len(text)
    while start < n:
        cut = text.find("\n\n", start + size - 1) if start + size < n else -1
        end = n if cut < 0 else cut + 2
        out.append(text[start:end])
        start = end
    return out


def write_merges(path: str | None, tokens: Iterable[bytes]) -> None:
    if path:
        Path(path).write_text("".join(t.hex() + "\n" for t in tokens), encoding="ascii")


def merges_digest(tokens: Sequence[bytes]) -> str:
    h = hashlib.sha256()
    for t in tokens:
        h.update(len(t).to_bytes(8, "little"))
        h.update(t)
    return h.hexdigest()[:16]


def ids_digest(batches: Iterable[Sequence[int]]) -> tuple[str, int]:
    """A digest of a list of id lists (each list's length, then its ids) and the id count."""
    h = hashlib.sha256()
    total = 0
    for ids in batches:
        h.update(len(ids).to_bytes(8, "little"))
        h.update(array("I", ids).tobytes())
        total += len(ids)
    return h.hexdigest()[:16], total


def pattern_source(name: str | None) -> str | None:
    from bpeds.tokenizer.pretokenize import PATTERNS

    return None if name is None else PATTERNS.get(name, name)


# -- training -------------------------------------------------------------------------------


class PhaseTimer:
    """A bpeds progress object that marks the phases of :func:`bpeds.train`.

    ``start`` is called once the corpus is counted (end of *prep*), the first
    ``update`` after the first merge (pair counting, heap build, first merge:
    *first*), ``close`` at the end of the merge loop (*loop*).
    """

    def __init__(self, timer: ChildTimer) -> None:
        self.timer = timer
        self.seen = False

    def start(self, total: int) -> None:
        self.timer.mark("prep")

    def update(self, n: int) -> None:
        if not self.seen:
            self.seen = True
            self.timer.mark("first")

    def close(self) -> None:
        if not self.seen:
            self.timer.mark("first")
        self.timer.mark("loop")


def _token_table(merges: Sequence[tuple[int, int]]) -> list[bytes]:
    table = [bytes((b,)) for b in range(256)]
    for a, b in merges:
        table.append(table[a] + table[b])
    return table


def derive_file(source: str | None, derive: Spec, dest: Path) -> int:
    """Write the input ``derive`` describes (see the module docstring) to ``dest``.

    Streamed, so that making it does not raise the job's peak RSS. Returns its
    size in bytes.
    """
    n = derive["bytes"]
    if derive["kind"] == "dna":
        # Each random byte's low two bits pick a letter.
        table = bytes(b"ACGT"[b & 3] for b in range(256))
        dest.write_bytes(random.Random(derive.get("seed", 0)).randbytes(n).translate(table))
        return n
    if derive["kind"] != "unsplit" or source is None:
        raise ValueError(f"unknown input {derive!r}")
    left = n
    with open(source, encoding="utf-8") as f, dest.open("wb") as out:
        while left > 0:
            block = f.read(1 << 16)
            if not block:
                raise ValueError(f"{source} has fewer than {n:,} bytes that are not whitespace")
            data = "".join(block.split()).encode("utf-8")
            if len(data) >= left:  # the last block, cut back to a character boundary
                out.write(data[:left].decode("utf-8", errors="ignore").encode("utf-8"))
                break
            out.write(data)
            left -= len(data)
    return dest.stat().st_size


def split_groups(source: str, k: int, folder: Path) -> dict[str, Path]:
    """``{"g0": path, ...}``: line ``i`` of ``source`` written to group ``i % k``'s file."""
    paths = {f"g{g}": folder / f"g{g}.txt" for g in range(k)}
    files = [p.open("w", encoding="utf-8", newline="") for p in paths.values()]
    try:
        with open(source, encoding="utf-8", newline="") as f:
            for i, line in enumerate(f):
                files[i % k].write(line)
    finally:
        for out in files:
            out.close()
    return paths


def train_bpeds(spec: Spec) -> tuple[list[bytes] | None, Report]:
    import bpeds

    options: dict[str, Any] = {"workers": spec.get("workers", 1)}
    for key in ("preset", "tie", "representation", "score", "variant"):
        if spec.get(key) is not None:
            options[key] = spec[key]
    if spec.get("model"):  # continued training from the workload's setup tokenizer
        options["base"] = spec["model"]
    if "pattern" in spec:
        options["pattern"] = spec["pattern"]
    with tempfile.TemporaryDirectory(prefix="bpeds-job-") as tmp:
        data: Any
        if spec.get("derive"):
            data = Path(tmp) / "input.txt"
            size = derive_file(spec.get("file"), spec["derive"], data)
        elif spec.get("groups"):
            data = split_groups(spec["file"], spec["groups"], Path(tmp))
            size = sum(p.stat().st_size for p in data.values())
        else:
            data = Path(spec["file"])
            size = data.stat().st_size
        timer = ChildTimer()
        phases = PhaseTimer(timer)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tok = bpeds.train(data, spec["vocab"], progress=phases, **options)
        timer.finish()
    report: Report = timer.report()
    report["mb"] = size / 1e6
    for clock in ("wall", "cpu"):
        report[f"{clock}_merge"] = report[f"{clock}_first"] + report[f"{clock}_loop"]
    # Every token's bytes only when the merge list is compared: late minbpe-basic merges
    # are long tokens, and Proust's 100,000 take gigabytes in all (the Vocab docstring).
    tokens = _token_table(tok.merges)[256:] if spec.get("out") else None
    report["merges"] = len(tok.merges)
    if caught:  # e.g. fewer merges than asked: a small corpus ran out of pairs
        report["warning"] = str(caught[0].message)[:120]
    if spec.get("save"):
        tok.save(spec["save"], overwrite=True)
    heldout = spec.get("heldout")
    if heldout:
        data = Path(heldout).read_text(encoding="utf-8")
        n = len(tok.encode_ordinary(data))
        report["heldout_bytes_per_token"] = len(data.encode("utf-8")) / n
    return tokens, report


def read_exactly(path: str | Path) -> str:
    """A file's text as bpeds reads it: UTF-8, line ends kept as they are (no newline
    translation, which would turn ``\r\n`` into ``\n`` for the peers only)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def _peer_text(spec: Spec) -> list[str]:
    return exact_pieces(read_exactly(spec["file"]))


def train_rustbpe(spec: Spec) -> tuple[list[bytes], Report]:
    import rustbpe

    pattern = pattern_source(spec["pattern"])
    if pattern is None:
        raise ValueError("rustbpe always splits with a pattern")
    timer = ChildTimer()
    pieces = _peer_text(spec)
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(pieces), vocab_size=spec["vocab"], pattern=pattern)
    timer.finish()
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
    return [bytes(token) for token, rank in ranks if rank >= 256], timer.report()


def train_hf(spec: Spec) -> tuple[list[bytes], Report]:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    from bpeds.scoring.ties import gpt2_byte_to_unicode

    pattern = pattern_source(spec["pattern"])
    if pattern is None:
        raise ValueError("the HF benchmark splits with a pattern")
    byte_level = pre_tokenizers.ByteLevel
    timer = ChildTimer()
    pieces = _peer_text(spec)
    hf = Tokenizer(models.BPE())
    if spec["pattern"] == "gpt2":
        hf.pre_tokenizer = byte_level(add_prefix_space=False, use_regex=True)
    else:
        split = pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True)
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [split, byte_level(add_prefix_space=False, use_regex=False)]
        )
    trainer = trainers.BpeTrainer(
        vocab_size=spec["vocab"], show_progress=False, initial_alphabet=byte_level.alphabet()
    )
    hf.train_from_iterator(pieces, trainer)
    timer.finish()
    inverse = {ch: b for b, ch in gpt2_byte_to_unicode().items()}
    merges = json.loads(hf.to_str())["model"]["merges"]
    pairs = [m if isinstance(m, list) else m.split(" ") for m in merges]
    return [bytes(inverse[ch] for ch in a + b) for a, b in pairs], timer.report()


def train_bpeasy(spec: Spec) -> tuple[list[bytes], Report]:
    import bpeasy  # type: ignore[import-untyped]

    pattern = pattern_source(spec["pattern"])
    timer = ChildTimer()
    pieces = _peer_text(spec)
    vocab: dict[bytes, int] = bpeasy.train_bpe(iter(pieces), pattern, 1 << 20, spec["vocab"])
    timer.finish()
    ranked = sorted(vocab.items(), key=lambda item: item[1])
    return [token for token, rank in ranked if rank >= 256], timer.report()


def train_sentencepiece(spec: Spec) -> tuple[None, Report]:
    """sentencepiece's BPE trainer (``model_type="bpe"``, ``byte_fallback=True``, every
    character covered), on the file's lines, with a thread per available core. It splits
    text its own way (at whitespace, no pattern), so its merges are not compared; the
    row says what a user who reaches for it pays for the same vocabulary size."""
    import io

    import sentencepiece as spm  # type: ignore[import-untyped]

    timer = ChildTimer()
    text = read_exactly(spec["file"])
    lines = [line for line in text.splitlines() if line.strip()]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        model_type="bpe",
        vocab_size=spec["vocab"],
        byte_fallback=True,
        character_coverage=1.0,
        input_sentence_size=0,  # every line, no sampling
        max_sentence_length=1 << 20,
        num_threads=len(os.sched_getaffinity(0)),
        hard_vocab_limit=False,
        minloglevel=2,
    )
    timer.finish()
    report = timer.report()
    report["pieces"] = len(lines)
    return None, report


TRAINERS: dict[str, Callable[[Spec], tuple[list[bytes] | None, Report]]] = {
    "bpeds": train_bpeds,
    "rustbpe": train_rustbpe,
    "hf": train_hf,
    "bpeasy": train_bpeasy,
    "sentencepiece": train_sentencepiece,
}


def use_regex_split() -> None:
    """Split with the ``regex`` module alone, as bpeds did before ``bpeds.tokenizer.fastsplit``: no
    pattern is narrowed, so every split is ``regex``'s ``findall`` and counting takes the
    segmenter for long texts."""
    import bpeds.tokenizer.fastsplit

    bpeds.tokenizer.fastsplit.narrow = lambda pattern: None


def job_train(spec: Spec) -> Report:
    tokens, report = TRAINERS[spec["impl"]](spec)
    if tokens is not None:
        write_merges(spec.get("out"), tokens)
        report["merges"] = len(tokens)
        report["merges_digest"] = merges_digest(tokens)
    if "mb" not in report:
        report["mb"] = Path(spec["file"]).stat().st_size / 1e6
    return report


# -- encoding -------------------------------------------------------------------------------


def job_encode(spec: Spec) -> Report:
    from bpeds import Tokenizer

    impl = spec["impl"]
    tok = Tokenizer.load(spec["model"])
    text = Path(spec["file"]).read_text(encoding="utf-8")
    batch = impl.endswith("-batch")
    texts = documents(text, spec["doc_chars"]) if batch else [text]
    encode: Callable[[], list[list[int]]]
    fresh = bool(spec.get("fresh"))  # no warm-up: the first call fills every cache
    if impl.startswith("bpeds"):
        if not fresh:
            tok.encode("warm up: builds the tables")
        if batch:
            workers = spec["workers"]

            def encode() -> list[list[int]]:
                return tok.encode_batch(texts, workers=workers)

        else:

            def encode() -> list[list[int]]:
                return [tok.encode(text)]

    elif impl.startswith("tiktoken"):
        from bpeds.tokenizer.formats import to_tiktoken

        enc = to_tiktoken(tok)
        if not fresh:
            enc.encode("warm up")
        if batch:
            threads = spec["threads"]

            def encode() -> list[list[int]]:
                return enc.encode_batch(texts, num_threads=threads)

        else:

            def encode() -> list[list[int]]:
                return [enc.encode(text)]

    elif impl == "hf-batch":
        from bpeds.tokenizer.formats import to_hf

        hf = to_hf(tok)
        hf.encode("warm up")

        def encode() -> list[list[int]]:
            return [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]

    else:
        raise ValueError(f"unknown encoder {impl!r}")
    if spec.get("warm_text"):
        encode()  # the whole text once, untimed: every piece cache warm
    timer = ChildTimer()
    out = encode()
    timer.finish()
    report: Report = timer.report()
    report["digest"], report["tokens"] = ids_digest(out)
    report["texts"] = len(texts)
    report["mb"] = len(text.encode("utf-8")) / 1e6
    return report


# -- split and count ----------------------------------------------------------------------


def job_split(spec: Spec) -> Report:
    from bpeds.tokenizer.io import iter_segments
    from bpeds.tokenizer.training import count_pieces

    source = pattern_source(spec["pattern"])
    timer = ChildTimer()
    segments = iter_segments(Path(spec["file"]), pattern=source, special_tokens=[])
    counts = count_pieces(segments, source)
    timer.finish()
    assert isinstance(counts, dict)
    report: Report = timer.report()
    h = hashlib.sha256()
    for piece, n in counts.items():
        h.update(piece.encode("utf-8"))
        h.update(b"\0" + n.to_bytes(8, "little"))
    report["digest"] = h.hexdigest()[:16]
    report["types"] = len(counts)
    report["pieces"] = sum(counts.values())
    report["mb"] = Path(spec["file"]).stat().st_size / 1e6
    return report


# -- lower layers (ablations) ------------------------------------------------------------


def _multiset(name: str) -> Any:
    """A Multiset factory by class name (``Batched(Name)`` wraps one), or None: the default.

    A class this version of bpeds lacks raises (the run is reported as failed).
    """
    import bpeds.structures as structures

    if name == "default":
        return None
    inner = name.removeprefix("Batched(").removesuffix(")")
    cls = getattr(structures, inner)
    if inner != name:
        return lambda tie: structures.Batched(cls(tie=tie))
    return lambda tie: cls(tie=tie)


def _policy(name: str) -> Any:
    from bpeds.structures import AdaptiveCompaction, NeverCompact, ThresholdCompaction

    return {
        "threshold": ThresholdCompaction,
        "never": NeverCompact,
        "adaptive": AdaptiveCompaction,
    }[name]()


def job_driver(spec: Spec) -> Report:
    from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
    from bpeds.driver import MergeDriver
    from bpeds.tokenizer.training import count_pieces

    timer = ChildTimer()
    text = Path(spec["file"]).read_text(encoding="utf-8")
    sequence = spec["mode"] == "sequence"
    source = pattern_source(spec["pattern"])
    # In ~1 MB pieces, as bpeds.train streams a file: one findall over 13 MB would hold
    # all 3 M pre-tokens at once (peak RSS 240 instead of ~100 MiB). Without a pattern
    # the text is one chunk.
    units = [text] if source is None else exact_pieces(text)
    del text
    pieces = count_pieces(units, source, sequence=sequence)
    del units
    corpus: Corpus
    if isinstance(pieces, list):
        corpus = SequenceCorpus(
            (p.encode("utf-8") for p in pieces), structure=spec.get("structure", "arrays")
        )
    else:
        corpus = TypeCorpus.from_counts(
            ((p.encode("utf-8"), n) for p, n in pieces.items()),
            policy=_policy(spec.get("policy", "threshold")),
        )
    del pieces
    timer.mark("prep")
    driver = MergeDriver(
        corpus,
        spec["vocab"] - 256,
        tie=spec["tie"],
        multiset=_multiset(spec.get("multiset", "default")),
        counting=spec.get("counting", "overlapping"),
    )
    driver.drop_dead = spec.get("drop_dead", True)
    for _ in driver:
        pass
    timer.mark("merge")
    timer.finish()
    tokens = _token_table([r.pair for r in driver.records])[256:]
    write_merges(spec.get("out"), tokens)
    report: Report = timer.report()
    report["merges"] = len(tokens)
    report["merges_digest"] = merges_digest(tokens)
    return report


JOBS: dict[str, Callable[[Spec], Report]] = {
    "train": job_train,
    "encode": job_encode,
    "driver": job_driver,
    "split": job_split,
}


def main(argv: list[str]) -> int:
    args = argv[1:]
    top = 0
    if args and args[0] == "--profile":
        top, args = int(args[1]), args[2:]
    spec = json.loads(args[0])
    start = time.perf_counter()
    if spec.get("split") == "regex":
        use_regex_split()
    if top:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        report = prof.runcall(JOBS[spec["job"]], spec)
        stats = pstats.Stats(prof, stream=sys.stderr)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
    else:
        report = JOBS[spec["job"]](spec)
    report["wall_child_total"] = time.perf_counter() - start
    report.setdefault("peak_rss_mib", peak_rss_mib())  # ChildTimer.finish() sets it
    report["peak_rss_end_mib"] = peak_rss_mib()
    # The largest peak RSS among reaped child processes (a worker pool); a forked
    # worker's figure includes the pages it shares with this process.
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if children:
        report["peak_rss_workers_mib"] = children
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
