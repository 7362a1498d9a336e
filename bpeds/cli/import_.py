"""``bpeds import``: convert another tool's files (minbpe, Hugging Face, tiktoken) to a
bpeds model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    UsageError,
    add_command,
    check_new,
    input_path,
    note,
    pattern_arg,
    plural,
)
from bpeds.tokenizer.formats import load_hf, load_hf_vocab_merges, load_minbpe, load_tiktoken


def _special_arg(value: str) -> tuple[str, int]:
    text, sep, number = value.rpartition("=")
    if not sep or not text or not (number.isascii() and number.isdigit()):
        raise argparse.ArgumentTypeError(
            f"expected TEXT=ID (e.g. '<|endoftext|>=100257'), got {value!r}"
        )
    return text, int(number)


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds import``: convert the files to a bpeds model; the exit status."""
    fmt = args.format
    want = 2 if fmt == "hf-vocab" else 1
    if len(args.inputs) != want:
        raise UsageError(
            "--format hf-vocab takes two files: vocab.json merges.txt"
            if fmt == "hf-vocab"
            else f"--format {fmt} takes one file"
        )
    if args.pattern is not None and fmt in ("hf", "minbpe"):
        raise UsageError(f"a {fmt} file records its own split pattern: drop --pattern")
    if args.special_token and fmt != "tiktoken":
        raise UsageError("--special-token is only for --format tiktoken")
    if args.renumber and fmt == "minbpe":
        raise UsageError("a minbpe model already numbers tokens as bpeds does: drop --renumber")
    check_new([Path(args.output)], args.force)
    for item in args.inputs:
        input_path(item)
    if fmt == "minbpe":
        tok = load_minbpe(args.inputs[0])
    elif fmt == "hf":
        tok = load_hf(args.inputs[0], renumber=args.renumber)
    elif fmt == "hf-vocab":
        pattern = "gpt2" if args.pattern is None else pattern_arg(args.pattern)
        tok = load_hf_vocab_merges(*args.inputs, pattern=pattern, renumber=args.renumber)
    else:
        if args.pattern is None:
            raise UsageError(
                "a .tiktoken file holds no split pattern: pass --pattern (gpt2, gpt4, gpt4o, "
                "a regex, or none)"
            )
        specials = dict(args.special_token or [])
        tok = load_tiktoken(
            args.inputs[0],
            pattern=pattern_arg(args.pattern),
            special_tokens=specials,
            renumber=args.renumber,
        )
    tok.save(args.output, overwrite=args.force)
    note(
        f"bpeds import: {plural(tok.num_merges, 'merge')}, "
        f"{plural(len(tok.special_tokens), 'special token')}; "
        f"wrote {args.output}"
    )
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds import`` and its options to the subcommands ``sub``."""
    m = add_command(sub, "import", "Convert another tool's files to a bpeds model (JSON).", run)
    m.add_argument(
        "inputs",
        nargs="+",
        metavar="FILE",
        help="the file to convert (two files for hf-vocab: vocab.json merges.txt)",
    )
    m.add_argument(
        "-f",
        "--format",
        required=True,
        choices=("minbpe", "hf", "hf-vocab", "tiktoken"),
        help="minbpe .model; hf: byte-level BPE tokenizer.json; hf-vocab: GPT-2 style "
        "vocab.json + merges.txt; tiktoken: a .tiktoken rank file",
    )
    m.add_argument("-o", "--output", required=True, metavar="PATH", help="the bpeds model to write")
    m.add_argument(
        "--pattern",
        metavar="P",
        help="split pattern for formats that do not record one: required for tiktoken; "
        "hf-vocab defaults to gpt2. gpt2, gpt4, gpt4o, a regex, or none",
    )
    m.add_argument(
        "--special-token",
        action="append",
        type=_special_arg,
        metavar="TEXT=ID",
        help="a special token of a .tiktoken vocabulary (repeatable), e.g. '<|endoftext|>=100257'",
    )
    m.add_argument(
        "--renumber",
        action="store_true",
        help="give tokens bpeds's ids (bytes 0..255 by value, then merges in order, then "
        "special tokens) when the file numbers them otherwise (GPT-2's files do)",
    )
    m.add_argument("--force", action="store_true", help="replace the output file if it exists")
