"""The ``bpeds`` command: count, train, encode, decode, inspect, export, import, compare and
prune tokenizers.

Run ``bpeds --help`` (or ``python -m bpeds --help``) for the commands and
``bpeds <command> --help`` for each command's options. :func:`main` takes the
argument list and returns the exit status, so the command can be driven
in-process.

Exit status: 0 success; 1 bad input or data (a missing or unreadable file, a
corrupt model, invalid UTF-8, a special token where none is allowed, an
output file that exists without ``--force``, a tokenizer a format cannot
hold); 2 usage (unknown option, missing or invalid argument value, such as a
vocabulary size too small for the 256 bytes and the special tokens);
130 interrupted. Each error is one line on standard error; ``bpeds --traceback
COMMAND ...`` prints its Python traceback before it (where your own score's
code failed, say).

Models are read in any of: bpeds JSON (what ``bpeds train`` writes), a
Hugging Face ``tokenizer.json`` numbered as bpeds numbers tokens, or a
minbpe ``.model``; the kind is recognised from the contents. Other files
(``.tiktoken``, ``vocab.json`` + ``merges.txt``, Hugging Face files with
other ids) are converted first with ``bpeds import``.

One module per command (:mod:`bpeds.cli.train`, :mod:`~bpeds.cli.count`,
:mod:`~bpeds.cli.encode`, :mod:`~bpeds.cli.decode`, :mod:`~bpeds.cli.info`,
:mod:`~bpeds.cli.export`, :mod:`~bpeds.cli.import_`, :mod:`~bpeds.cli.compare`,
:mod:`~bpeds.cli.prune`)
adds its parser and runs it; :mod:`bpeds.cli.common` holds what they share.
Like any program built on bpeds, they use only its public API.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from bpeds import __version__
from bpeds.cli import compare, count, decode, encode, export, import_, info, prune, train
from bpeds.cli.common import (
    EPILOG,
    EXIT_DATA,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    DataError,
    Parser,
    UsageError,
    note,
)
from bpeds.errors import BpedsError

__all__ = [
    "EXIT_DATA",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "DataError",
    "UsageError",
    "build_parser",
    "main",
]

#: The commands, in the order ``bpeds --help`` lists them.
COMMANDS = (train, count, encode, decode, info, export, import_, compare, prune)


def build_parser() -> argparse.ArgumentParser:
    """The ``bpeds`` argument parser (every option has help)."""
    parser = Parser(
        prog="bpeds",
        description="Train, use, inspect and convert byte-level BPE tokenizers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bpeds {__version__}")
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="on an error, print its Python traceback (of your own score's code, say) before "
        "the one-line message",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse, letting optional positionals follow options (``encode M --format json TEXT``).

    argparse fills ``encode``'s optional TEXT and ``decode``'s IDs as soon as it
    has seen MODEL, so a TEXT or IDs given after an option come back as
    leftovers; they are put in place here. Anything else left over is an error.
    """
    args, extras = parser.parse_known_args(argv)
    if extras:
        command = getattr(args, "command", None)
        if command == "encode" and args.text is None and len(extras) == 1:
            if not extras[0].startswith("-"):
                args.text = extras[0]
                extras = []
        elif command == "decode" and not args.ids:
            try:
                args.ids = [int(x) for x in extras]
                extras = []
            except ValueError:
                pass
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bpeds`` with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = _parse(parser, argv)
    except SystemExit as exc:  # --help, --version, or a usage error
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    prog = f"bpeds {args.command}"
    try:
        try:
            return int(args.run(args))
        except Exception as exc:
            if args.traceback:  # the whole chain: the user's own code's error included
                traceback.print_exception(exc, file=sys.stderr)
            raise
    except UsageError as exc:
        note(f"{prog}: error: {exc}")
        return EXIT_USAGE
    except DataError as exc:
        note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except FileExistsError as exc:
        note(f"{prog}: error: {exc}".replace("pass overwrite=True", "pass --force"))
        return EXIT_DATA
    except FileNotFoundError as exc:
        note(f"{prog}: error: no such file: {exc.filename or exc}")
        return EXIT_DATA
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so the exit flush does not fail again
        except (OSError, ValueError):
            pass
        return EXIT_DATA
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        note(f"{prog}: error: {where}{exc.strerror or exc}")
        return EXIT_DATA
    except ImportError as exc:
        note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except (BpedsError, ValueError) as exc:
        note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except KeyboardInterrupt:
        note(f"{prog}: interrupted")
        return EXIT_INTERRUPTED
    except RecursionError:
        note(f"{prog}: error: the input is nested too deeply to process")
        return EXIT_DATA
    except MemoryError:
        note(f"{prog}: error: out of memory (the input is too large for this machine)")
        return EXIT_DATA
