"""The field's variants against their authors' code: BoundlessBPE, parity-aware BPE, SCRIPT-BPE's
character-safe merges, and pruning (its own script).

Usage::

    python benchmarks/bench_field.py benchmarks/corpora --ref-python PY \\
        --boundless PATH/fastboundlessbpe --parity PATH/parity-aware-bpe \\
        --script-bpe PATH/script_bpe [--repeat 3] [--quick] [--write-docs]

``PY`` is a Python with what the references need (``regex``, ``heapdict``, ``numpy``,
``tokenizers``); the references run from their checkouts, in child processes of their own,
and nothing of them is part of bpeds. Every job is a fresh process (``--job``); the jobs of a
workload run one after the other, alternating, ``--repeat`` times, and the tables give the
median CPU seconds of each (user + system, the process and the children it waited for) and
its ratio to the reference. Each job that trains also reports a digest of its merges, and a
workload checks that bpeds and the reference made the same ones. ``--write-docs`` puts the
tables between the ``<!-- begin field:NAME -->`` markers of ``docs/variants.md``.

Workloads (``--quick``: smaller inputs and vocabularies, for a smoke test):

- ``boundless``: the non-empty lines of the first 1 MB of ``en_heldout.txt`` as documents,
  the authors' vocabulary size 8,192 (bpeds' 8,205): the authors' ``BpeTrainer`` (tau 0.9,
  blowup) then ``BoundlessBpeTrainer``, against ``bpeds.train(variant="boundless")`` with the
  authors' pattern, ties and counting, and plain BPE in bpeds on the same documents;
- ``parity``: the first 100 kB of each of the five files of ``multi/`` as five languages,
  1,000 merges in ratio mode (the files are not parallel: no development sets): the paper's
  ``learn_bpe``, against bpeds' driver with ``parity_aware`` on the same words (its
  pre-tokenizer, Hugging Face's, in the job), Hugging Face's ``ParityBpeTrainer``, and
  bpeds' ``group_frequency`` and ``frequency`` on those words;
- ``charsafe``: the lines of the first 200 kB of each ``multi/`` file, 2,000 merges: SCRIPT-BPE's
  ``train_bpe`` (``bytes_gpt4o_cb``, one worker) against ``variant="charsafe"`` and plain BPE
  in bpeds; then ``bpeds.compare`` of the two on the next 100 kB of each file (tokens per
  byte per language);
- ``pruning``: a 8,192-token tokenizer trained on the first 1 MB of ``en13.txt``, pruned on the
  same text by LiteToken's rule (0.05) and Trimmed BPE's (threshold 5), against training it;
  then ``bpeds.compare`` of the three on ``en_heldout.txt``'s first 300 kB.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import statistics
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, markdown_table, run_child

# SCRIPT-BPE's trainer imports these where its workers start, but never calls them here.
for _stub in ("polars", "tabulate"):
    if importlib.util.find_spec(_stub) is None:
        sys.modules[_stub] = types.ModuleType(_stub)

DOCS = Path(__file__).resolve().parent.parent / "docs" / "variants.md"
LANGS = ("ja_manpages", "ko_gnome_help", "ru_fortunes", "udhr_samples", "zh_fortunes")


def _digest(pairs: list[list[str]] | list[tuple[str, str]]) -> str:
    return hashlib.sha256(json.dumps([list(p) for p in pairs]).encode()).hexdigest()[:16]


def _head(path: Path, size: int, skip: int = 0) -> str:
    raw = path.read_bytes()[skip : skip + size]
    return raw.decode("utf-8", "ignore")


# -- the jobs (each in a child process) ---------------------------------------------------


def job_boundless_ref(a: dict[str, Any]) -> dict[str, Any]:
    import contextlib
    import io
    import os
    import tempfile

    sys.path.insert(0, a["repo"] + "/python")
    from boundlessbpe import BoundlessBpeTrainer, BpeTrainer  # type: ignore[import-not-found]

    docs = [d for d in _head(Path(a["file"]), a["bytes"]).split("\n") if d]
    tmp = tempfile.mkdtemp()
    corpus = os.path.join(tmp, "d.jsonl")
    Path(corpus).write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), "utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        w = BpeTrainer()
        w.train(tau=0.9, filepath=corpus, outprefix=tmp + "/w", num_lines=len(docs),
                vocab_size=a["vocab"], recalc=0, blowup=True, checkpoint_iterations=0,
                verbose=False, progress_interval=0)  # fmt: skip
        w.save(tmp + "/words")
        b = BoundlessBpeTrainer()
        b.train(filepath=corpus, outprefix=tmp + "/b", num_lines=len(docs), recalc=0,
                word_model_file=tmp + "/words.model", checkpoint_iterations=0, verbose=False,
                progress_interval=0)  # fmt: skip
    made = [[p[0].hex(), p[1].hex()] for (p, _, _) in b.inf_data.merges.values()]
    return {"digest": _digest(made), "supermerges": len(made)}


def job_boundless_bpeds(a: dict[str, Any]) -> dict[str, Any]:
    import bpeds

    docs = [d for d in _head(Path(a["file"]), a["bytes"]).split("\n") if d]
    size = a["vocab"] + 13
    if a["plain"]:
        bpeds.train(docs, size, pattern="gpt4o", workers=1)
        return {}
    tok = bpeds.train(docs, size, variant={"name": "boundless", "tau": 0.9}, pattern="gpt4o",
                      tie="lexicographic", counting="non_overlapping", workers=1)  # fmt: skip
    events = tok.events or []
    tb = tok.token_bytes
    made = [[tb(e[2]).hex(), tb(e[3]).hex()] for e in events if e[0] == "supermerge"]
    return {"digest": _digest(made), "supermerges": len(made)}


def _parity_texts(a: dict[str, Any]) -> list[list[str]]:
    return [_head(Path(a["dir"]) / f"{name}.txt", a["bytes"]).splitlines(True) for name in LANGS]


def job_parity_ref(a: dict[str, Any]) -> dict[str, Any]:
    import io

    import numpy  # type: ignore[import-not-found]

    sys.path.insert(0, a["repo"] + "/parity_aware_bpe")
    import contextlib

    import parity_aware_learn_bpe as pa  # type: ignore[import-not-found]

    files = [io.StringIO("".join(t)) for t in _parity_texts(a)]
    for f, name in zip(files, LANGS, strict=True):
        f.name = name
    with contextlib.redirect_stderr(io.StringIO()):  # (its progress bar)
        _, merges = pa.learn_bpe(files, io.StringIO(), None, a["merges"],
                                 ratio=numpy.array([1.0] * len(LANGS)))  # fmt: skip
    return {"digest": _digest(merges), "merges": len(merges)}


def job_parity_hf(a: dict[str, Any]) -> dict[str, Any]:
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import BPE
    from tokenizers.pre_tokenizers import ByteLevel, Whitespace
    from tokenizers.trainers import ParityBpeTrainer

    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([Whitespace(), ByteLevel(use_regex=False)])
    trainer = ParityBpeTrainer(num_merges=a["merges"], min_frequency=2, ratio=[1.0] * len(LANGS))
    trainer.train_from_iterator(tok, train_iterators=[iter(t) for t in _parity_texts(a)])
    merges = json.loads(tok.to_str())["model"]["merges"]
    merges = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return {"digest": _digest(merges), "merges": len(merges)}


def job_parity_bpeds(a: dict[str, Any]) -> dict[str, Any]:
    from collections import Counter

    from tokenizers import pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel, Whitespace

    from bpeds.corpus import TypeCorpus
    from bpeds.driver import MergeDriver
    from bpeds.scoring import ParityAware, gpt2_byte_to_unicode

    to_char = gpt2_byte_to_unicode()
    to_byte = {c: b for b, c in to_char.items()}
    pre = pre_tokenizers.Sequence([Whitespace(), ByteLevel(use_regex=False)])
    items = []
    for g, text in enumerate(_parity_texts(a)):
        words: Counter[str] = Counter()
        for line in text:
            words.update(w for w, _ in pre.pre_tokenize_str(line) if w)
        items += [(bytes(to_byte[c] for c in w), n, g) for w, n in words.items()]
    scores: dict[str, Any] = {
        "parity_aware": ParityAware(ratio=[1.0] * len(LANGS)),
        "group_frequency": "group_frequency",
        "frequency": "frequency",
    }
    tie = "subword_nmt" if a["score"] == "parity_aware" else "smallest_ids"
    driver = MergeDriver(TypeCorpus.from_counts(items), a["merges"], score=scores[a["score"]],
                         tie=tie)  # fmt: skip
    driver.run()
    text = driver.vocab.token_bytes
    merges = [["".join(to_char[b] for b in text(t)) for t in r.pair] for r in driver.records]
    return {"digest": _digest(merges), "merges": len(merges)}


def _charsafe_docs(a: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for name in LANGS:
        out += [d for d in _head(Path(a["dir"]) / f"{name}.txt", a["bytes"]).split("\n") if d]
    return out


class ScriptCorpus:
    """What SCRIPT-BPE's ``train_bpe`` reads of its corpus: ``(chunk, count)`` items."""

    name = "bench"

    @property
    def metadata(self) -> dict[str, Any]:
        return {"items": len(self.counts)}

    def __init__(self, counts: dict[tuple[int, ...], int]) -> None:
        self.counts = counts

    def worker_iterate(self, worker: int, workers: int) -> Any:
        from script_bpe.utils import token_array  # type: ignore[import-not-found]

        for seq, n in self.counts.items():
            yield token_array(seq), n


def job_charsafe_ref(a: dict[str, Any]) -> dict[str, Any]:
    import contextlib
    import io
    import os
    from collections import Counter

    sys.path.insert(0, a["repo"])
    os.environ["PYTHONPATH"] = a["repo"] + os.pathsep + str(Path(__file__).resolve().parent)
    from script_bpe.bpe.train import train_bpe  # type: ignore[import-not-found]
    from script_bpe.pretokenize import get_pretokenizer  # type: ignore[import-not-found]

    pre = get_pretokenizer("bytes_gpt4o_cb")
    counts: Counter[tuple[int, ...]] = Counter()
    for doc in _charsafe_docs(a):
        for chunk in pre.encode_and_chunk(doc):
            counts[tuple(chunk)] += 1
    with contextlib.redirect_stdout(io.StringIO()):
        tok = train_bpe(pre, ScriptCorpus(dict(counts)), a["merges"], num_workers=1, verbose=False)
    table = {i + 1: bytes([i]) for i in range(256)}
    merges = []
    for rule in tok.merge_rules:
        x, y = rule.tokens_from
        table[rule.token_to] = table[x] + table[y]
        merges.append([table[x].hex(), table[y].hex()])
    return {"digest": _digest(merges), "merges": len(merges)}


def job_charsafe_bpeds(a: dict[str, Any]) -> dict[str, Any]:
    import bpeds

    variant = None if a["plain"] else "charsafe"
    tok = bpeds.train(_charsafe_docs(a), 256 + a["merges"], pattern="gpt4o", variant=variant,
                      tie="smallest_ids", workers=1)  # fmt: skip
    merges = [[tok.token_bytes(x).hex(), tok.token_bytes(y).hex()] for x, y in tok.merges]
    return {"digest": _digest(merges), "merges": len(merges)}


def job_pruning(a: dict[str, Any]) -> dict[str, Any]:
    import bpeds

    text = _head(Path(a["file"]), a["bytes"])
    if a["rule"] == "train":
        bpeds.train(text, a["vocab"], workers=1)
        return {}
    tok = bpeds.Tokenizer.load(a["model"])
    pruned = bpeds.prune(tok, text, a["rule"], workers=1)
    return {"removed": pruned.options["pruned"][-1]["removed"]}


JOBS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "boundless_ref": job_boundless_ref,
    "boundless_bpeds": job_boundless_bpeds,
    "parity_ref": job_parity_ref,
    "parity_hf": job_parity_hf,
    "parity_bpeds": job_parity_bpeds,
    "charsafe_ref": job_charsafe_ref,
    "charsafe_bpeds": job_charsafe_bpeds,
    "pruning": job_pruning,
}


# -- the parent --------------------------------------------------------------------------------


def measure(
    rows: list[tuple[str, str, str, dict[str, Any]]], repeat: int
) -> dict[str, tuple[float, dict[str, Any]]]:
    """Run each ``(label, python, job, args)`` ``repeat`` times, alternating; the median CPU
    seconds and the last report of each."""
    cpu: dict[str, list[float]] = {label: [] for label, _, _, _ in rows}
    reports: dict[str, dict[str, Any]] = {}
    for _ in range(repeat):
        for label, python, job, args in rows:
            argv = [python, __file__, "--job", job, "--args", json.dumps(args)]
            result = run_child(argv)
            cpu[label].append(result.cpu)
            reports[label] = result.report
            print(f"  {label}: {result.cpu:.2f} CPU-s", file=sys.stderr)
    return {label: (statistics.median(v), reports[label]) for label, v in cpu.items()}


def table(results: dict[str, tuple[float, dict[str, Any]]], reference: str) -> str:
    ref = results[reference][0]
    rows = []
    for label, (cpu, report) in results.items():
        same = report.get("digest")
        match = (
            ""
            if same is None
            else ("same" if same == results[reference][1].get("digest") else "differ")
        )
        rows.append([label, f"{cpu:.2f}", f"{cpu / ref:.2f}", match])
    return markdown_table(
        ["implementation", "CPU s (median)", "÷ reference", "merges vs reference"], rows
    )


def write_docs(blocks: dict[str, str]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name, body in blocks.items():
        begin, end = f"<!-- begin field:{name} -->", f"<!-- end field:{name} -->"
        head, found, rest = text.partition(begin)
        if not found:
            raise SystemExit(f"docs/variants.md has no {begin} marker")
        _, found, tail = rest.partition(end)
        text = head + begin + "\n" + body + "\n" + end + tail
    DOCS.write_text(text, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path, nargs="?")
    ap.add_argument("--job")
    ap.add_argument("--args")
    ap.add_argument("--ref-python", default=sys.executable)
    ap.add_argument("--boundless", type=Path)
    ap.add_argument("--parity", type=Path)
    ap.add_argument("--script-bpe", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    if args.job:
        started = time.process_time()
        report = JOBS[args.job](json.loads(args.args))
        report["cpu_inside"] = time.process_time() - started
        print(json.dumps(report))
        return 0
    return run_suite(args)


def run_suite(args: argparse.Namespace) -> int:
    c, q, py, ref = args.corpora, args.quick, sys.executable, args.ref_python
    blocks: dict[str, str] = {}
    info = machine_info()
    stamp = (
        f"Measured {info['date']} on {info['cpu']} ({info['cores']}), load {info['load_average']}, "
        f"{info['python']}; each job a fresh process, median CPU seconds of {args.repeat} "
        "alternating runs (`benchmarks/bench_field.py`)."
    )
    wanted = set(args.only or ["boundless", "parity", "charsafe", "pruning"])

    def speed(rows: list[tuple[str, str, str, dict[str, Any]]]) -> str:
        """The jobs measured, as a table against the first (the reference), dated."""
        return table(measure(rows, args.repeat), rows[0][0]) + "\n\n" + stamp

    if "boundless" in wanted and args.boundless:
        base = {"file": str(c / "en_heldout.txt"), "bytes": 200_000 if q else 1_000_000,
                "vocab": 2000 if q else 8192}  # fmt: skip
        blocks["boundless"] = speed([
            ("authors' Python trainer", ref, "boundless_ref",
             {**base, "repo": str(args.boundless)}),
            ("bpeds boundless", py, "boundless_bpeds", {**base, "plain": False}),
            ("bpeds plain BPE", py, "boundless_bpeds", {**base, "plain": True}),
        ])  # fmt: skip
    if "parity" in wanted and args.parity:
        base = {"dir": str(c / "multi"), "bytes": 30_000 if q else 100_000,
                "merges": 300 if q else 1000}  # fmt: skip
        blocks["parity"] = speed([
            ("authors' learn_bpe", ref, "parity_ref", {**base, "repo": str(args.parity)}),
            ("bpeds parity_aware", py, "parity_bpeds", {**base, "score": "parity_aware"}),
            ("HF ParityBpeTrainer (Rust)", py, "parity_hf", base),
            ("bpeds group_frequency", py, "parity_bpeds", {**base, "score": "group_frequency"}),
            ("bpeds frequency", py, "parity_bpeds", {**base, "score": "frequency"}),
        ])  # fmt: skip
    if "charsafe" in wanted and args.script_bpe:
        base = {"dir": str(c / "multi"), "bytes": 50_000 if q else 200_000,
                "merges": 500 if q else 2000}  # fmt: skip
        blocks["charsafe"] = speed([
            ("SCRIPT-BPE train_bpe", ref, "charsafe_ref", {**base, "repo": str(args.script_bpe)}),
            ("bpeds charsafe", py, "charsafe_bpeds", {**base, "plain": False}),
            ("bpeds plain BPE", py, "charsafe_bpeds", {**base, "plain": True}),
        ])  # fmt: skip
        blocks["charsafe-compare"] = charsafe_compare(c, base)
    if "pruning" in wanted:
        blocks.update(pruning(c, q, speed))
    for name, body in blocks.items():
        print(f"## {name}\n\n{body}\n")
    if args.write_docs:
        write_docs(blocks)
    return 0


def charsafe_compare(c: Path, base: dict[str, Any]) -> str:
    import bpeds

    train = {n: _head(c / "multi" / f"{n}.txt", base["bytes"]) for n in LANGS}
    heldout = {n: _head(c / "multi" / f"{n}.txt", 100_000, skip=base["bytes"]) for n in LANGS}
    cmp = bpeds.compare(
        {"bpe": {"pattern": "gpt4o"}, "charsafe": {"pattern": "gpt4o", "variant": "charsafe"}},
        train=train, heldout=heldout, vocab_size=256 + base["merges"], sizes=1, workers=1,
    )  # fmt: skip
    rows = []
    for label in ("bpe", "charsafe"):
        row = cmp.row(label)
        rows.append([label, *(f"{row[f'tokens_per_byte[{n}]']:.4f}" for n in LANGS),
                     f"{row['char_split_share']:.4f}"])  # fmt: skip
    return markdown_table(["config", *LANGS, "char_split_share"], rows)


def pruning(
    c: Path, q: bool, speed: Callable[[list[tuple[str, str, str, dict[str, Any]]]], str]
) -> dict[str, str]:
    import tempfile

    import bpeds

    size, vocab = (200_000, 2048) if q else (1_000_000, 8192)
    text = _head(c / "en13.txt", size)
    tok = bpeds.train(text, vocab, workers=1)
    model = Path(tempfile.mkdtemp()) / "m.json"
    tok.save(model)
    base = {"file": str(c / "en13.txt"), "bytes": size, "vocab": vocab, "model": str(model)}
    py = sys.executable
    timed = speed([
        ("train (plain BPE)", py, "pruning", {**base, "rule": "train"}),
        ("prune litetoken", py, "pruning", {**base, "rule": "litetoken"}),
        ("prune trim", py, "pruning", {**base, "rule": {"name": "trim", "threshold": 5}}),
    ])  # fmt: skip
    heldout = _head(c / "en_heldout.txt", 300_000)
    configs = {
        "plain": tok,
        "litetoken": bpeds.prune(tok, text, "litetoken", workers=1),
        "trim(5)": bpeds.prune(tok, text, {"name": "trim", "threshold": 5}, workers=1),
    }
    cmp = bpeds.compare(configs, train=text, heldout=heldout, workers=1)
    rows = []
    for label in configs:
        row = cmp.row(label)
        rows.append([label, row["vocab_size"], f"{row['bytes_per_token']:.4f}",
                     f"{row['residue_share']:.4f}", row["undertrained"]])  # fmt: skip
    quality = markdown_table(
        ["config", "vocab_size", "bytes_per_token", "residue_share", "undertrained"], rows
    )
    return {"pruning": timed, "pruning-compare": quality}


if __name__ == "__main__":
    raise SystemExit(main())
