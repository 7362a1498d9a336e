"""``bpeds info``: a model's vocabulary size, pattern, special tokens, options and longest
tokens.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    UsageError,
    add_command,
    plural,
)
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.formats.minbpe import render_token
from bpeds.tokenizer.pretokenize import PATTERNS


def _pattern_label(pattern: str | None) -> str:
    if pattern is None:
        return "none (no split)"
    for name, source in PATTERNS.items():
        if source == pattern:
            return name
    return pattern


def _info(tok: Tokenizer, top: int) -> dict[str, Any]:
    n = tok.num_merges
    own = tok.ids  # (a model's own ids: shown for its tokens; measured in bpeds's numbering)
    inner = tok.renumbered()
    lengths = sorted(range(256, 256 + n), key=lambda i: (-len(inner.token_bytes(i)), i))[:top]
    return {
        "vocab_size": tok.vocab_size,
        "merges": n,
        "not_emitted": 256 + n + len(tok.special_tokens) - tok.vocab_size,
        "max_token_id": tok.max_token_id,
        "pattern": _pattern_label(tok.pattern),
        "special_tokens": tok.special_tokens,
        "options": tok.options,
        "longest_tokens": [
            {
                "id": i if own is None else own[i],
                "bytes": len(inner.token_bytes(i)),
                "token": render_token(inner.token_bytes(i)),
            }
            for i in lengths
        ],
    }


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds info``: print what the model holds; the exit status."""
    if args.top < 0:
        raise UsageError(f"--top must be >= 0, got {args.top}")
    tok = load_model(args.model)
    info = _info(tok, args.top)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return EXIT_OK
    specials = info["special_tokens"]
    lines = [
        f"vocab size:      {info['vocab_size']} (256 bytes + {plural(info['merges'], 'merge')}"
        f" + {plural(len(specials), 'special token')}"
        + (
            f" - {info['not_emitted']} removed or hidden by the variant"
            if info["not_emitted"]
            else ""
        )
        + ")",
        f"largest id:      {info['max_token_id']}",
        f"pattern:         {info['pattern']}",
        "special tokens:  "
        + (", ".join(f"{t} = {i}" for t, i in specials.items()) if specials else "none"),
        "options:         " + (json.dumps(info["options"], ensure_ascii=False) or "{}"),
    ]
    if info["longest_tokens"]:
        lines.append("longest tokens:")
        lines += [
            f"  {t['id']:>7}  {t['bytes']:>5} bytes  [{t['token']}]" for t in info["longest_tokens"]
        ]
    print("\n".join(lines))
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds info`` and its options to the subcommands ``sub``."""
    i = add_command(
        sub,
        "info",
        "Show a model's vocabulary size, pattern, special tokens, options and longest tokens.",
        run,
        model=True,
    )
    i.add_argument(
        "--top", type=int, default=5, metavar="N", help="list the N longest tokens (default 5)"
    )
    i.add_argument("--json", action="store_true", help="print the information as JSON")
