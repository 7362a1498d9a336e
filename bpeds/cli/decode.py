"""``bpeds decode``: decode token ids to text, written as raw bytes."""

from __future__ import annotations

import argparse
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    DataError,
    UsageError,
    add_command,
    read_input,
    stdout_bytes,
)
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.limits import parse_json_limited

#: Token ids read as text have at most this many digits (far beyond any vocabulary).
_MAX_ID_DIGITS = 18


def _parse_ids(text: str, source: str) -> list[int]:
    stripped = text.strip()
    if stripped.startswith("["):
        ids = parse_json_limited(stripped, f"{source} (not a JSON list of ids)", DataError)
        if not isinstance(ids, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in ids
        ):
            raise DataError(f"{source} must be a JSON list of integer ids")
        return ids
    out: list[int] = []
    for n, word in enumerate(stripped.split()):
        if not (word.isascii() and word.isdigit()) or len(word) > _MAX_ID_DIGITS:
            raise DataError(f"{source}: item {n + 1} ({word[:20]!r}) is not a token id")
        out.append(int(word))
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds decode``: write the bytes of the ids; the exit status."""
    if args.ids and args.input is not None:
        raise UsageError("give the ids either as arguments or with --input, not both")
    tok = load_model(args.model)
    if args.ids:
        ids = list(args.ids)
    else:
        source = "standard input" if (args.input or "-") == "-" else args.input
        ids = _parse_ids(read_input(args.input or "-", "strict"), source)
    stdout_bytes(tok.decode_bytes(ids))
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds decode`` and its options to the subcommands ``sub``."""
    d = add_command(
        sub, "decode", "Decode token ids to text (written as raw bytes).", run, model=True
    )
    d.add_argument(
        "ids",
        nargs="*",
        type=int,
        metavar="ID",
        help="token ids (default: read --input or standard input: ids separated by "
        "whitespace, or a JSON list)",
    )
    d.add_argument(
        "-i", "--input", metavar="FILE", help="read the ids from FILE ('-': standard input)"
    )
