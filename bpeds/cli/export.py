"""``bpeds export``: write a model in another tool's format."""

from __future__ import annotations

import argparse
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    add_command,
    check_new,
    note,
    outputs,
    save,
)
from bpeds.tokenizer.formats import load_model


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds export``: write the model in another format; the exit status."""
    tok = load_model(args.model)
    check_new(outputs(args.format, args.output), args.force)
    written = save(tok, args.format, args.output, args.force)
    note(f"bpeds export: wrote {', '.join(str(p) for p in written)}")
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds export`` and its options to the subcommands ``sub``."""
    x = add_command(sub, "export", "Write a model in another tool's format.", run, model=True)
    x.add_argument(
        "-f",
        "--format",
        required=True,
        choices=("minbpe", "hf", "tiktoken"),
        help="minbpe: OUTPUT.model + OUTPUT.vocab; hf: a Hugging Face tokenizer.json; "
        "tiktoken: a .tiktoken rank file (its pattern and special tokens are printed)",
    )
    x.add_argument("-o", "--output", required=True, metavar="PATH", help="where to write")
    x.add_argument("--force", action="store_true", help="replace output files that exist")
