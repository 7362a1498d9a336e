"""What the ``bpeds`` commands share: exit statuses, errors, reading input, writing models.

A command raises :class:`UsageError` (exit status 2) or :class:`DataError`
(exit status 1) with the whole message; :func:`bpeds.cli.main` prints it after
the command's name. Each command module (``bpeds.cli.train``, ...) adds its
parser with :func:`add_command` and runs from the parsed arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.counts import Counts, sum_counts
from bpeds.tokenizer.files import check_targets
from bpeds.tokenizer.formats import rank_rule_conflicts, save_hf, save_minbpe, save_tiktoken
from bpeds.tokenizer.formats.minbpe import minbpe_paths
from bpeds.tokenizer.formats.tiktoken_format import NO_SPLIT_PATTERN
from bpeds.tokenizer.io import is_endless
from bpeds.tokenizer.limits import parse_json_limited

__all__ = [
    "EPILOG",
    "EXIT_DATA",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATS",
    "DataError",
    "Parser",
    "UsageError",
    "add_command",
    "check_new",
    "errors_option",
    "group_arg",
    "input_path",
    "json_object",
    "load_counts",
    "note",
    "outputs",
    "pattern_arg",
    "plural",
    "read_input",
    "save",
    "stdout_bytes",
]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

FORMATS = ("bpeds", "minbpe", "hf", "tiktoken")


class UsageError(Exception):
    """A command-line argument is wrong (exit status 2)."""


class DataError(Exception):
    """The input or data is wrong (exit status 1); the message is the whole story."""


# -- reading and writing ----------------------------------------------------------------------


def stdout_bytes(data: bytes) -> None:
    """Write raw bytes to standard output (decoded with U+FFFD for a text-only stream)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (e.g. an in-process capture)
        sys.stdout.write(data.decode("utf-8", errors="replace"))
    else:
        buffer.write(data)
        buffer.flush()


def _decode(data: bytes, source: str, errors: str) -> str:
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{source} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at byte offset "
            f"{exc.start}); pass --errors replace to read it with U+FFFD in its place"
        ) from None


def read_input(path: str, errors: str) -> str:
    """A text file's contents, or stdin's for ``-``; an endless device is refused."""
    if path == "-":
        try:
            fd = sys.stdin.fileno()
        except (OSError, ValueError, AttributeError):  # an in-process stand-in
            fd = -1
        if fd >= 0 and is_endless(fd):
            raise DataError("standard input is a device that never ends; give a file or a pipe")
        return _decode(sys.stdin.buffer.read(), "standard input", errors)
    with open(path, "rb") as f:
        if is_endless(f.fileno()):
            raise DataError(f"{path} is a device that never ends; give a file or a pipe")
        data = f.read()
    return _decode(data, path, errors)


def add_unicode_option(parser: argparse.ArgumentParser, default: str) -> None:
    """``--unicode T``: the Unicode tables a pattern's classes are read with, ``regex`` (the
    ``regex`` module's) or ``16.0`` (tiktoken's, rustbpe's, Hugging Face's); read it with
    :func:`unicode_arg`. ``default`` says what leaving it out means, for the help."""
    parser.add_argument(
        "--unicode",
        choices=["regex", "16.0"],
        help="the Unicode tables the pattern's classes are read with: 16.0, those of "
        "tiktoken, rustbpe and Hugging Face (the rustbpe and hf presets'), or regex, the "
        f"regex module's (as minbpe); default: {default}",
    )


def unicode_arg(value: str | None) -> str | None:
    """The ``unicode`` argument of ``--unicode T`` (``regex``: ``None``)."""
    return None if value == "regex" else value


def pattern_arg(value: str) -> str | None:
    """``none`` (any case) means no split; names and regex sources pass through."""
    return None if value.lower() == "none" else value


def input_path(item: str) -> Path:
    """An input file's path; refused (before any work) when nothing is there."""
    p = Path(item)
    if not p.exists():
        raise DataError(f"no such input file: {item}")
    return p


def check_new(paths: Sequence[Path], force: bool) -> None:
    """Refuse before any work when an output exists and ``--force`` was not given
    (the ``FileExistsError`` says to pass ``--force``, see :func:`bpeds.cli.main`), or when
    its directory does not exist."""
    try:
        check_targets(paths, overwrite=force)
    except FileNotFoundError as exc:
        raise DataError(str(exc)) from None


def outputs(fmt: str, output: str) -> list[Path]:
    """The files that saving in ``fmt`` to ``output`` writes."""
    if fmt == "minbpe":
        return list(minbpe_paths(output))
    return [Path(output)]


def save(tok: Tokenizer, fmt: str, output: str, force: bool) -> list[Path]:
    """Save ``tok`` in ``fmt``; return the files written, with notes for lossy formats."""
    if fmt == "bpeds":
        tok.save(output, overwrite=force)
        return [Path(output)]
    if fmt == "minbpe":
        return list(save_minbpe(tok, output, overwrite=force))
    if fmt == "hf":
        conflicts = rank_rule_conflicts(tok)
        if conflicts:
            shown = ", ".join(str(i) for i in conflicts[:5])
            note(
                f"warning: {len(conflicts)} token(s) (ids {shown}) can encode differently in "
                "Hugging Face, which applies merges by pair rank (see docs/formats.md)"
            )
        return [save_hf(tok, output, overwrite=force)]
    path = save_tiktoken(tok, output, overwrite=force)
    note(
        "note: a .tiktoken file holds only the ranks; rebuild the encoding with "
        f"pat_str={json.dumps(tok.pattern if tok.pattern is not None else NO_SPLIT_PATTERN)} "
        f"and special_tokens={json.dumps(tok.special_tokens, ensure_ascii=False)}"
    )
    return [path]


def plural(n: int, noun: str) -> str:
    """``1 merge``, ``2 merges``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def note(message: str) -> None:
    """Print a line to standard error (summaries, warnings, errors)."""
    print(message, file=sys.stderr)


def load_counts(paths: Sequence[str]) -> Counts:
    """The counts files at ``paths``, added up in the order given."""
    parts = []
    for item in paths:
        p = input_path(item)
        if p.is_dir():
            raise DataError(f"{item} is a directory; give the counts files in it")
        parts.append(Counts.load(p))
    try:
        return sum_counts(parts)
    except ValueError as exc:
        raise DataError(str(exc)) from None


def json_object(value: str, option: str, example: str) -> dict[str, Any]:
    """The JSON object ``option`` was given (a :class:`UsageError` showing ``example``
    for anything else)."""
    obj = parse_json_limited(value, option, UsageError)
    if not isinstance(obj, dict):
        raise UsageError(f"{option} JSON must be an object such as {example}")
    return obj


def group_arg(value: str) -> tuple[str, str]:
    """A ``NAME=FILE`` argument as ``(name, file)``."""
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected NAME=FILE (e.g. 'en=english.txt'), got {value!r}"
        )
    return name, path


# -- the parser ---------------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors name the command and exit with status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


EPILOG = """\
exit status:
  0    success
  1    bad input or data: a missing or unreadable file, a corrupt model, invalid
       UTF-8, a disallowed special token, an output that exists (without --force),
       a tokenizer the chosen format cannot hold
  2    usage: an unknown option, a missing or invalid argument value
  130  interrupted

Models are read as bpeds JSON, Hugging Face tokenizer.json (bpeds numbering) or
minbpe .model, recognised from their contents. See 'bpeds COMMAND --help'.
"""


def errors_option(p: argparse.ArgumentParser) -> None:
    """Add ``--errors``: what invalid UTF-8 in the input does (see :func:`read_input`)."""
    p.add_argument(
        "--errors",
        choices=("strict", "replace"),
        default="strict",
        help="invalid UTF-8 in the input: strict (default) stops with an error naming the "
        "byte offset; replace reads it as U+FFFD",
    )


def add_command(
    sub: Any,
    name: str,
    help: str,
    run: Callable[[argparse.Namespace], int],
    *,
    model: bool = False,
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` to ``sub`` (the parser's subparsers): ``help`` is its
    one-line help and description, and ``run(args)`` runs it and returns the exit status.
    ``model``: its first argument is the model file it reads (``args.model``)."""
    fmt = argparse.RawDescriptionHelpFormatter
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=help, epilog=EPILOG, formatter_class=fmt
    )
    p.set_defaults(run=run)
    if model:
        p.add_argument("model", help="the tokenizer model file")
    return p
