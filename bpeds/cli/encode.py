"""``bpeds encode``: encode text to token ids."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    DataError,
    UsageError,
    add_command,
    errors_option,
    read_input,
)
from bpeds.tokenizer.encoder import SpecialTokenError
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.formats.minbpe import render_token


def _text_for(args: argparse.Namespace) -> str:
    if args.text is not None and args.input is not None:
        raise UsageError("give the text either as an argument or with --input, not both")
    if args.text is not None:
        return str(args.text)
    return read_input(args.input or "-", args.errors)


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds encode``: print the ids of the text; the exit status."""
    if args.ordinary and args.allow_special:
        raise UsageError("--ordinary and --allow-special contradict each other")
    tok = load_model(args.model)
    text = _text_for(args)
    allowed: Any = frozenset()
    if args.allow_special:
        allowed = "all" if "all" in args.allow_special else frozenset(args.allow_special)
        unknown = set(args.allow_special) - {"all", *tok.special_tokens}
        if unknown:
            raise UsageError(
                f"--allow-special {sorted(unknown)[0]!r} is not a special token of this model "
                f"(it has: {', '.join(tok.special_tokens) or 'none'})"
            )
    try:
        if args.ordinary:
            ids = tok.encode_ordinary(text)
        else:
            ids = tok.encode(text, allowed_special=allowed)
    except SpecialTokenError:
        token = min((text.find(t), -len(t), t) for t in tok.special_tokens if t in text)[2]
        raise DataError(
            f"the text holds the special token {token!r}; pass --allow-special {token!r} (or "
            "--allow-special all) to encode it as its id, or --ordinary to encode it as text"
        ) from None
    if args.output_format == "json":
        print(json.dumps(ids))
    elif args.output_format == "tokens":
        for i in ids:
            print(f"{i}\t[{render_token(tok.id_to_token(i))}]")
    else:
        print(" ".join(map(str, ids)))
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds encode`` and its options to the subcommands ``sub``."""
    e = add_command(sub, "encode", "Encode text to token ids.", run, model=True)
    e.add_argument(
        "text",
        nargs="?",
        help="the text to encode (default: read --input, or standard input; the text is "
        "encoded exactly, a final newline included)",
    )
    e.add_argument(
        "-i", "--input", metavar="FILE", help="read the text from FILE ('-': standard input)"
    )
    e.add_argument(
        "--format",
        dest="output_format",
        choices=("ids", "json", "tokens"),
        default="ids",
        help="ids: space-separated (default); json: a JSON list; tokens: one line per token, "
        "id and rendered bytes",
    )
    e.add_argument(
        "--allow-special",
        action="append",
        metavar="TEXT",
        help="encode this special token's text as its id (repeatable; 'all' for every one). "
        "Without it, special-token text in the input is an error (as in tiktoken)",
    )
    e.add_argument(
        "--ordinary",
        action="store_true",
        help="encode special-token text as ordinary text",
    )
    errors_option(e)
