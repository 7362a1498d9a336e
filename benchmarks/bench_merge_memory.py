"""Memory of training per distinct pre-token: bpeds (from counts) against rustbpe and Hugging Face.

Each measurement is a fresh child process; the table shows medians. For bpeds the merge
phase is measured on its own: the child loads a counts file, notes its peak RSS (``VmHWM``),
trains, and reports the growth of the peak, which is what the merge phase added over the
counts. rustbpe and Hugging Face ``tokenizers`` count and merge in one call, so for them the
whole call is measured (peak RSS after it, less the child's peak before it, with the text
already read). The growth is divided by the number of distinct pieces.

    .venv/bin/python benchmarks/bench_merge_memory.py --vocab 8192 --repeat 3

The corpus is the one ``bench_counting.py`` makes (text shared by the files, plus words
seen once), written to one file here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, markdown_table, median, peak_rss_mib, run_child
from bench_counting import make_corpus

IMPLS = ["bpeds (merge phase, from counts)", "rustbpe (whole call)", "hf (whole call)"]


def job(impl: str, folder: Path, vocab: int) -> dict[str, object]:
    text_path = folder / "corpus.txt"
    if impl.startswith("bpeds"):
        import bpeds

        counts = bpeds.Counts.load(folder / "corpus.counts")
        before = peak_rss_mib()
        t = time.perf_counter()
        bpeds.train(counts, vocab, workers=1)
    else:
        from jobs import exact_pieces

        pieces = exact_pieces(text_path.read_text(encoding="utf-8"))
        from bpeds.tokenizer.pretokenize import GPT4_PATTERN

        if impl.startswith("rustbpe"):
            import rustbpe

            tok = rustbpe.Tokenizer()
            before = peak_rss_mib()
            t = time.perf_counter()
            tok.train_from_iterator(iter(pieces), vocab_size=vocab, pattern=GPT4_PATTERN)
        else:
            from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

            byte_level = pre_tokenizers.ByteLevel
            hf = Tokenizer(models.BPE())
            split = pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="removed", invert=True)
            hf.pre_tokenizer = pre_tokenizers.Sequence(
                [split, byte_level(add_prefix_space=False, use_regex=False)]
            )
            trainer = trainers.BpeTrainer(
                vocab_size=vocab, show_progress=False, initial_alphabet=byte_level.alphabet()
            )
            before = peak_rss_mib()
            t = time.perf_counter()
            hf.train_from_iterator(pieces, trainer)
    seconds = time.perf_counter() - t
    after = peak_rss_mib()
    return {"before": before, "after": after, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        print(json.dumps(job(args.job, Path(args.dir), args.vocab)))
        return
    import bpeds

    with tempfile.TemporaryDirectory(prefix="bpeds-bench-merge-memory-") as d:
        folder = Path(d)
        paths = make_corpus(folder, args.files, 6, 40000)
        corpus = folder / "corpus.txt"
        corpus.write_text("".join(p.read_text(encoding="utf-8") for p in paths), encoding="utf-8")
        counts = bpeds.count(corpus, workers=1)
        counts.save(folder / "corpus.counts")
        distinct = len(counts)
        size = corpus.stat().st_size
        results: dict[str, list[dict[str, float]]] = {i: [] for i in IMPLS}
        for _ in range(args.repeat):
            for impl in IMPLS:
                argv = [sys.executable, __file__, "--job", impl, "--dir", d]
                child = run_child([*argv, "--vocab", str(args.vocab)])
                results[impl].append(child.report)
    rows = []
    for impl in IMPLS:
        growth = median(r["after"] - r["before"] for r in results[impl])
        peak = median(r["after"] for r in results[impl])
        secs = median(r["seconds"] for r in results[impl])
        assert growth is not None
        assert peak is not None
        assert secs is not None
        rows.append(
            [
                impl,
                f"{growth:.0f}",
                f"{growth * 2**20 / distinct:.0f}",
                f"{peak:.0f}",
                f"{secs:.1f}",
            ]
        )
    info = machine_info()
    print(
        f"{size / 1e6:.1f} MB, {distinct} distinct pieces (gpt4), vocab {args.vocab}, "
        f"medians of {args.repeat}"
    )
    print(f"{info['cpu']}; {info['cores']}; load {info['load_average']}; {info['date']}")
    header = ["training", "peak RSS growth MiB", "bytes per distinct piece", "peak MiB", "s"]
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
