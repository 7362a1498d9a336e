"""``bpeds prune``: remove tokens from a trained tokenizer, measured on text (``bpeds.prune``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bpeds import prune
from bpeds.cli.common import (
    EXIT_OK,
    UsageError,
    add_command,
    check_new,
    errors_option,
    input_path,
    json_object,
    note,
    plural,
)
from bpeds.tokenizer.formats import load_model


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds prune``: the pruned tokenizer written to ``-o``; the exit status."""
    tok = load_model(args.model)
    files = [input_path(item) for item in args.inputs]
    check_new([Path(args.output)], args.force)
    rule: dict[str, Any] = {"name": args.rule}
    if args.rule_options is not None:
        rule.update(json_object(args.rule_options, "--rule-options", '{"threshold": 0.05}'))
    try:
        pruned = prune(tok, files, rule, errors=args.errors)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    pruned.save(args.output, overwrite=args.force)
    if not args.quiet:
        removed = pruned.options["pruned"][-1]["removed"]
        note(
            f"bpeds prune: removed {plural(removed, 'token')}, vocab size "
            f"{tok.vocab_size} -> {pruned.vocab_size}; wrote {args.output}"
        )
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds prune`` and its options to the subcommands ``sub``."""
    p = add_command(
        sub,
        "prune",
        "Remove tokens from a tokenizer by a rule measured on text; encoding stays "
        "consistent (the removals are replayed after the merges).",
        run,
        model=True,
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="UTF-8 text files to measure on")
    p.add_argument("-o", "--output", required=True, help="where to write the pruned tokenizer")
    p.add_argument(
        "--rule",
        default="litetoken",
        choices=("litetoken", "trim"),
        help="litetoken: intermediate merge residues, F1 / (F1 + F2) below the threshold "
        "(default 0.05); trim: tokens emitted fewer than threshold times (default 1)",
    )
    p.add_argument(
        "--rule-options", metavar="JSON", help="the rule's options, e.g. '{\"threshold\": 0.05}'"
    )
    errors_option(p)
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
