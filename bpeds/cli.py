"""The ``bpeds`` command: count, train, encode, decode, inspect, export and import tokenizers.

Run ``bpeds --help`` (or ``python -m bpeds --help``) for the commands and
``bpeds <command> --help`` for each command's options. :func:`main` takes the
argument list and returns the exit status, so the command can be driven
in-process.

Exit status: 0 success; 1 bad input or data (a missing or unreadable file, a
corrupt model, invalid UTF-8, a special token where none is allowed, an
output file that exists without ``--force``, a tokenizer a format cannot
hold); 2 usage (unknown option, missing or invalid argument value, such as a
vocabulary size too small for the 256 bytes and the special tokens);
130 interrupted.

Models are read in any of: bpeds JSON (what ``bpeds train`` writes), a
Hugging Face ``tokenizer.json`` numbered as bpeds numbers tokens, or a
minbpe ``.model``; the kind is recognised from the contents. Other files
(``.tiktoken``, ``vocab.json`` + ``merges.txt``, Hugging Face files with
other ids) are converted first with ``bpeds import``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import stat
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

from bpeds import __version__
from bpeds.errors import BpedsError
from bpeds.scoring.registry import get_score
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.counts import Counts, sum_counts
from bpeds.tokenizer.encoder import SpecialTokenError
from bpeds.tokenizer.files import check_targets
from bpeds.tokenizer.formats import (
    load_hf,
    load_hf_vocab_merges,
    load_minbpe,
    load_model,
    load_tiktoken,
    rank_rule_conflicts,
    save_hf,
    save_minbpe,
    save_tiktoken,
)
from bpeds.tokenizer.formats.minbpe import minbpe_paths, render_token
from bpeds.tokenizer.formats.tiktoken_format import NO_SPLIT_PATTERN
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.limits import parse_json_limited
from bpeds.tokenizer.pretokenize import PATTERNS
from bpeds.tokenizer.training import count, count_to_file, train
from bpeds.variants import get_variant, variant_names

__all__ = ["EXIT_DATA", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "main"]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_FORMATS = ("bpeds", "minbpe", "hf", "tiktoken")
_SCORES = "frequency, length_weighted, pmi, npmi, likelihood_gain, wordpiece, group_frequency"
_TIES = ("smallest_ids", "leftmost", "lexicographic", "hf")
_PRESETS = ("minbpe-basic", "minbpe-regex", "hf", "rustbpe")


#: Token ids read as text have at most this many digits (far beyond any vocabulary).
_MAX_ID_DIGITS = 18


class UsageError(Exception):
    """A command-line argument is wrong (exit status 2)."""


class DataError(Exception):
    """The input or data is wrong (exit status 1); the message is the whole story."""


# -- reading and writing ----------------------------------------------------------------------


def _stdout_bytes(data: bytes) -> None:
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


def _endless(fd: int) -> bool:
    """Whether ``fd`` is a device that never ends (``/dev/zero``, ``/dev/urandom``): a
    character device that is neither a terminal nor ``/dev/null``."""
    st = os.fstat(fd)
    if not stat.S_ISCHR(st.st_mode) or os.isatty(fd):
        return False
    try:
        return st.st_rdev != os.stat(os.devnull).st_rdev
    except OSError:
        return True


def _read_input(path: str, errors: str) -> str:
    """A text file's contents, or stdin's for ``-``; an endless device is refused."""
    if path == "-":
        try:
            fd = sys.stdin.fileno()
        except (OSError, ValueError, AttributeError):  # an in-process stand-in
            fd = -1
        if fd >= 0 and _endless(fd):
            raise DataError("standard input is a device that never ends; give a file or a pipe")
        return _decode(sys.stdin.buffer.read(), "standard input", errors)
    with open(path, "rb") as f:
        if _endless(f.fileno()):
            raise DataError(f"{path} is a device that never ends; give a file or a pipe")
        data = f.read()
    return _decode(data, path, errors)


def _pattern_arg(value: str) -> str | None:
    """``none`` (any case) means no split; names and regex sources pass through."""
    return None if value.lower() == "none" else value


def _pattern_label(pattern: str | None) -> str:
    if pattern is None:
        return "none (no split)"
    for name, source in PATTERNS.items():
        if source == pattern:
            return name
    return pattern


def _input_path(item: str) -> Path:
    """An input file's path; refused (before any work) when nothing is there."""
    p = Path(item)
    if not p.exists():
        raise DataError(f"no such input file: {item}")
    return p


def _check_new(paths: Sequence[Path], force: bool) -> None:
    """Refuse before any work when an output exists and ``--force`` was not given
    (the ``FileExistsError`` says to pass ``--force``, see :func:`main`), or when
    its directory does not exist."""
    try:
        check_targets(paths, overwrite=force)
    except FileNotFoundError as exc:
        raise DataError(str(exc)) from None


def _outputs(fmt: str, output: str) -> list[Path]:
    """The files that saving in ``fmt`` to ``output`` writes."""
    if fmt == "minbpe":
        return list(minbpe_paths(output))
    return [Path(output)]


def _save(tok: Tokenizer, fmt: str, output: str, force: bool) -> list[Path]:
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
            _note(
                f"warning: {len(conflicts)} token(s) (ids {shown}) can encode differently in "
                "Hugging Face, which applies merges by pair rank (see docs/formats.md)"
            )
        return [save_hf(tok, output, overwrite=force)]
    path = save_tiktoken(tok, output, overwrite=force)
    _note(
        "note: a .tiktoken file holds only the ranks; rebuild the encoding with "
        f"pat_str={json.dumps(tok.pattern if tok.pattern is not None else NO_SPLIT_PATTERN)} "
        f"and special_tokens={json.dumps(tok.special_tokens, ensure_ascii=False)}"
    )
    return [path]


def _count(n: int, noun: str) -> str:
    """``1 merge``, ``2 merges``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _note(message: str) -> None:
    print(message, file=sys.stderr)


# -- commands ---------------------------------------------------------------------------------


def cmd_train(args: argparse.Namespace) -> int:
    specials: list[str] = args.special_token or []
    if args.vocab_size < 256 + len(specials):
        raise UsageError(
            f"--vocab-size {args.vocab_size} is too small: it counts the 256 byte tokens and "
            f"{_count(len(specials), 'special token')}, so it must be at least "
            f"{256 + len(specials)}"
        )
    if args.counts and (args.group or args.inputs):
        raise UsageError("give either counts files (--counts) or INPUT files, not both")
    if args.group and args.inputs:
        raise UsageError("give the input files either as INPUTs or with --group, not both")
    if not args.group and not args.inputs and not args.counts:
        raise UsageError("give at least one INPUT file (or --group NAME=FILE, repeated)")
    score = _score_spec(args.score, args.score_options)
    try:  # a bad --variant is a usage error before anything is read
        spec = _variant_spec(args.variant, args.variant_options)
        if spec is not None:
            get_variant(spec)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    with _user_modules(score):
        if score is not None:
            try:
                get_score(score)  # a bad --score is a usage error before anything is read
            except (ValueError, TypeError) as exc:
                raise UsageError(str(exc)) from None
        return _train(args, specials, score)


def _train(args: argparse.Namespace, specials: list[str], score: Any) -> int:
    """``bpeds train`` once its options are checked: read, train, save, report."""

    def unit(item: str) -> Any:
        if item == "-":
            return _read_input("-", args.errors)
        p = _input_path(item)
        if p.is_dir():
            raise DataError(f"{item} is a directory; give the files in it")
        return p

    data: Any
    if args.counts:
        data = _load_counts(args.counts)
    elif args.group:
        data = {}
        for name, item in args.group:
            data.setdefault(name, []).append(unit(item))
    else:
        data = [unit(item) for item in args.inputs]
    outputs = _outputs(args.format, args.output)
    _check_new(outputs, args.force)
    options: dict[str, Any] = {
        "special_tokens": specials,
        "workers": args.workers,
        "errors": args.errors,
        "progress": False if args.quiet else (True if args.progress else None),
    }
    for key in ("pattern", "preset", "tie", "min_frequency", "max_token_length"):
        value = getattr(args, key)
        if value is not None:
            options[key] = _pattern_arg(value) if key == "pattern" else value
    if score is not None:
        options["score"] = score
    variant = _variant_spec(args.variant, args.variant_options)
    if variant is not None:
        options["variant"] = variant
    if args.base is not None:
        options["base"] = load_model(args.base)
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            tok = train(data, args.vocab_size, **options)
    except (InvalidTextError, OSError, ImportError):
        raise
    except (ValueError, TypeError) as exc:  # train checks its arguments before reading data
        raise UsageError(str(exc)) from None
    for w in caught:
        _note(f"bpeds train: warning: {w.message}")
    seconds = time.perf_counter() - started
    written = _save(tok, args.format, args.output, args.force)
    if not args.quiet:
        _note(
            f"bpeds train: {_count(tok.num_merges, 'merge')}, vocab size {tok.vocab_size}, in "
            f"{seconds:.1f} s; wrote {', '.join(str(p) for p in written)}"
        )
    return EXIT_OK


def _load_counts(paths: Sequence[str]) -> Counts:
    """The counts files at ``paths``, added up in the order given."""
    parts = []
    for item in paths:
        p = _input_path(item)
        if p.is_dir():
            raise DataError(f"{item} is a directory; give the counts files in it")
        parts.append(Counts.load(p))
    try:
        return sum_counts(parts)
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _expand(items: Sequence[str]) -> list[Path]:
    """Input files: each item a file, or a glob (``*``, ``?``, ``[``, ``**``) that the shell
    did not expand (quoted, say), matched in sorted order."""
    out: list[Path] = []
    for item in items:
        if os.path.exists(item) or not any(c in item for c in "*?["):
            p = _input_path(item)
            if p.is_dir():
                raise DataError(f"{item} is a directory; give the files in it (or a glob)")
            out.append(p)
            continue
        matches = sorted(m for m in glob.glob(item, recursive=True) if os.path.isfile(m))
        if not matches:
            raise DataError(f"no file matches {item!r}")
        out += map(Path, matches)
    return out


def cmd_count(args: argparse.Namespace) -> int:
    if not args.inputs and not args.add:
        raise UsageError("give at least one INPUT file (or counts files to add with --add)")
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--scheduler counts on the cluster's workers: drop --workers")
    if args.add and (args.max_memory is not None or args.min_count != 1 or args.resume):
        raise UsageError(
            "--add holds the counts in memory: drop --max-memory, --min-count and --resume"
        )
    if not args.inputs and (args.pattern is not None or args.special_token):
        raise UsageError(
            "--add alone adds counts files as they are: drop --pattern and --special-token"
        )
    output = Path(args.output)
    _check_new([output], args.force)
    options: dict[str, Any] = {
        "pattern": "gpt4" if args.pattern is None else _pattern_arg(args.pattern),
        "special_tokens": args.special_token or [],
        "workers": args.workers,
        "errors": args.errors,
        "max_memory": args.max_memory,
        "min_count": args.min_count,
        "spill_dir": args.spill_dir,
    }
    started = time.perf_counter()
    with _scheduler(args.scheduler) as client:
        if client is not None:
            options["executor"] = client
            options["workers"] = None
        files = [p.resolve() for p in _expand(args.inputs)] if client else _expand(args.inputs)
        data: Any = files
        try:
            if args.resume is not None:
                folder = Path(args.resume)
                folder.mkdir(parents=True, exist_ok=True)
                options["resume_dir"] = folder
                options["on_file"] = None if args.quiet else _FileProgress(files)
            elif client is None and not args.quiet and len(files) > 1:
                data = _reporting(files, _FileProgress(files))
            if not args.add:
                pieces, total = count_to_file(data, output, overwrite=args.force, **options)
            else:
                parts = [count(files, **options)] if files else []
                parts.append(_load_counts(args.add))
                try:
                    summed = sum_counts(parts)
                except ValueError as exc:
                    raise DataError(str(exc)) from None
                summed.save(output, overwrite=args.force)
                pieces, total = len(summed), summed.total
        except (InvalidTextError, OSError, ImportError, DataError):
            raise
        except (ValueError, TypeError) as exc:  # count checks its arguments before reading
            raise UsageError(str(exc)) from None
    if not args.quiet:
        _note(
            f"bpeds count: {_count(pieces, 'distinct piece')}, {total} in all, in "
            f"{time.perf_counter() - started:.1f} s; wrote {output}"
        )
    return EXIT_OK


def _reporting(files: Sequence[Path], progress: _FileProgress) -> Iterator[Path]:
    """``files``, calling ``progress`` for each one as the next is asked for (when it
    has been read: its last batch may still be counting)."""
    previous: Path | None = None
    for f in files:
        if previous is not None:
            progress(previous, previous.stat().st_size, False)
        yield f
        previous = f
    if previous is not None:
        progress(previous, previous.stat().st_size, False)


class _FileProgress:
    """Progress of a count across files on stderr: files and bytes done, rate, time left
    (a line at most every two seconds, and one at the end)."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.files = len(files)
        self.bytes = sum(p.stat().st_size for p in files)
        self.done_files = self.done_bytes = self.skipped_bytes = 0
        self.start = self.last = time.perf_counter()

    def __call__(self, path: Path, size: int, skipped: bool) -> None:
        self.done_files += 1
        self.done_bytes += size
        if skipped:
            self.skipped_bytes += size
        now = time.perf_counter()
        if now - self.last < 2 and self.done_files < self.files:
            return
        self.last = now
        counted = self.done_bytes - self.skipped_bytes
        rate = counted / max(now - self.start, 1e-9)
        left = (self.bytes - self.done_bytes) / rate if rate > 0 else 0.0
        skipped_note = f" ({self.skipped_bytes / 1e6:.1f} MB done before)" * bool(
            self.skipped_bytes
        )
        _note(
            f"bpeds count: {self.done_files}/{self.files} files, "
            f"{self.done_bytes / 1e6:.1f} of {self.bytes / 1e6:.1f} MB{skipped_note}, "
            f"{rate / 1e6:.1f} MB/s, about {left:.0f} s left"
        )


@contextmanager
def _scheduler(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` of the Dask scheduler at ``address`` (None: no client).

    Its workers read the files, so the paths must be readable there."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "--scheduler counts on a Dask cluster, but dask.distributed is not installed: "
            "pip install 'bpeds[dask]'"
        ) from None
    try:
        client = Client(address, timeout="30s")  # type: ignore[no-untyped-call, unused-ignore]
    except OSError as exc:
        raise DataError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client


def _size_arg(value: str) -> int:
    """A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024)."""
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if text and text[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(text[-1]) + 1)
        text = text[:-1]
    try:
        number = float(text)
    except ValueError:
        number = -1
    if not number > 0 or number * scale < 1 << 20:
        raise argparse.ArgumentTypeError(
            f"expected a size of at least 1M such as 512M or 4G, got {value!r}"
        )
    return int(number * scale)


def _json_object(value: str, option: str, example: str) -> dict[str, Any]:
    obj = parse_json_limited(value, option, UsageError)
    if not isinstance(obj, dict):
        raise UsageError(f"{option} JSON must be an object such as {example}")
    return obj


def _score_spec(value: str | None, options: str | None) -> str | dict[str, Any] | None:
    """What ``--score`` and ``--score-options`` ask for: a name, or a dict with "name"."""
    if value is None:
        if options is not None:
            raise UsageError("--score-options needs --score (the score they are options of)")
        return None
    spec: str | dict[str, Any] = value
    if value.lstrip().startswith("{"):
        spec = _json_object(value, "--score", '{"name": "pmi"}')
    if options is None:
        return spec
    extra = _json_object(options, "--score-options", '{"min_count": 2}')
    if isinstance(spec, str):
        return {"name": spec, **extra}
    both = sorted(set(spec) & set(extra))
    if both:
        raise UsageError(
            f"--score and --score-options both give {', '.join(both)}: give each option once"
        )
    return {**spec, **extra}


def _variant_spec(value: str | None, options: str | None) -> str | dict[str, Any] | None:
    """What ``--variant`` and ``--variant-options`` ask for: a name, or a dict with "name"."""
    if value is None:
        if options is not None:
            raise UsageError("--variant-options needs --variant (the variant they are options of)")
        return None
    if options is None:
        return value
    return {"name": value, **_json_object(options, "--variant-options", '{"threshold": 0.6}')}


@contextmanager
def _user_modules(score: str | dict[str, Any] | None) -> Iterator[None]:
    """For a ``module:attribute`` score, the current directory is on ``sys.path`` while
    the command runs (as with ``python -m``), so a module next to the data is found."""
    name = score.get("name") if isinstance(score, dict) else score
    cwd = os.getcwd()
    if not (isinstance(name, str) and ":" in name) or cwd in sys.path or "" in sys.path:
        yield
        return
    sys.path.insert(0, cwd)
    try:
        yield
    finally:
        with suppress(ValueError):  # the user's module may have taken it off itself
            sys.path.remove(cwd)


def _group_arg(value: str) -> tuple[str, str]:
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected NAME=FILE (e.g. 'en=english.txt'), got {value!r}"
        )
    return name, path


def _text_for(args: argparse.Namespace) -> str:
    if args.text is not None and args.input is not None:
        raise UsageError("give the text either as an argument or with --input, not both")
    if args.text is not None:
        return str(args.text)
    return _read_input(args.input or "-", args.errors)


def cmd_encode(args: argparse.Namespace) -> int:
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


def cmd_decode(args: argparse.Namespace) -> int:
    if args.ids and args.input is not None:
        raise UsageError("give the ids either as arguments or with --input, not both")
    tok = load_model(args.model)
    if args.ids:
        ids = list(args.ids)
    else:
        source = "standard input" if (args.input or "-") == "-" else args.input
        ids = _parse_ids(_read_input(args.input or "-", "strict"), source)
    _stdout_bytes(tok.decode_bytes(ids))
    return EXIT_OK


def _info(tok: Tokenizer, top: int) -> dict[str, Any]:
    n = tok.num_merges
    lengths = sorted(range(256, 256 + n), key=lambda i: (-len(tok.token_bytes(i)), i))[:top]
    return {
        "vocab_size": tok.vocab_size,
        "merges": n,
        "not_emitted": 256 + n + len(tok.special_tokens) - tok.vocab_size,
        "max_token_id": tok.max_token_id,
        "pattern": _pattern_label(tok.pattern),
        "special_tokens": tok.special_tokens,
        "options": tok.options,
        "longest_tokens": [
            {"id": i, "bytes": len(tok.token_bytes(i)), "token": render_token(tok.token_bytes(i))}
            for i in lengths
        ],
    }


def cmd_info(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise UsageError(f"--top must be >= 0, got {args.top}")
    tok = load_model(args.model)
    info = _info(tok, args.top)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return EXIT_OK
    specials = info["special_tokens"]
    lines = [
        f"vocab size:      {info['vocab_size']} (256 bytes + {_count(info['merges'], 'merge')}"
        f" + {_count(len(specials), 'special token')}"
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


def cmd_export(args: argparse.Namespace) -> int:
    tok = load_model(args.model)
    _check_new(_outputs(args.format, args.output), args.force)
    written = _save(tok, args.format, args.output, args.force)
    _note(f"bpeds export: wrote {', '.join(str(p) for p in written)}")
    return EXIT_OK


def _special_arg(value: str) -> tuple[str, int]:
    text, sep, number = value.rpartition("=")
    if not sep or not text or not (number.isascii() and number.isdigit()):
        raise argparse.ArgumentTypeError(
            f"expected TEXT=ID (e.g. '<|endoftext|>=100257'), got {value!r}"
        )
    return text, int(number)


def cmd_import(args: argparse.Namespace) -> int:
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
    _check_new([Path(args.output)], args.force)
    for item in args.inputs:
        _input_path(item)
    if fmt == "minbpe":
        tok = load_minbpe(args.inputs[0])
    elif fmt == "hf":
        tok = load_hf(args.inputs[0], renumber=args.renumber)
    elif fmt == "hf-vocab":
        pattern = "gpt2" if args.pattern is None else _pattern_arg(args.pattern)
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
            pattern=_pattern_arg(args.pattern),
            special_tokens=specials,
            renumber=args.renumber,
        )
    tok.save(args.output, overwrite=args.force)
    _note(
        f"bpeds import: {_count(tok.num_merges, 'merge')}, "
        f"{_count(len(tok.special_tokens), 'special token')}; "
        f"wrote {args.output}"
    )
    return EXIT_OK


def _config_value(text: str) -> Any:
    """A ``--config`` value: JSON when it parses (numbers, true/false/null, quoted text,
    lists), else the text itself; ``none`` is null (as for --pattern)."""
    if text.lower() == "none":
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _config_spec(value: str) -> dict[str, Any]:
    """One ``--config``: ``KEY=VALUE,...`` or a JSON object, as a dict for bpeds.compare.

    Keys that are bpeds.train's arguments (and ``label``) are taken as they are; any other
    key is an option of the score or variant named before it (``score=pmi,min_count=2``
    gives ``{"score": {"name": "pmi", "min_count": 2}}``).
    """
    import inspect

    if value.lstrip().startswith("{"):
        return _json_object(value, "--config", '{"score": "pmi", "vocab_size": 4096}')
    params = set(inspect.signature(train).parameters) - {"data"}
    out: dict[str, Any] = {}
    plugin: str | None = None
    for item in value.split(","):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(
                f"--config {value!r}: expected KEY=VALUE items separated by commas, e.g. "
                f"'score=pmi,min_count=2,vocab_size=4096', got {item!r}"
            )
        val = _config_value(raw.strip())
        if key in ("score", "variant"):
            out[key] = val
            plugin = key
        elif key == "label" or key in params:
            if key in out:
                raise UsageError(f"--config {value!r} gives {key} twice")
            out[key] = val
        elif plugin is not None:
            spec = out[plugin]
            if not isinstance(spec, dict):
                spec = out[plugin] = {"name": spec}
            spec[key] = val
        else:
            raise UsageError(
                f"--config {value!r}: {key!r} is not an argument of bpeds train; an option of "
                "a score or variant follows it (score=pmi,min_count=2)"
            )
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    from bpeds.comparison import ConfigError, compare
    from bpeds.comparison.plots import FIGURES

    configs: list[Any] = [_config_spec(v) for v in args.config or []]
    for path in args.model or []:
        _input_path(path)
        configs.append(load_model(path))
    if not configs:
        raise UsageError("give at least one --config (or --model, a trained tokenizer)")
    if bool(args.train) == bool(args.train_group):
        raise UsageError("give the training files with --train or with --train-group, not both")
    if bool(args.heldout) == bool(args.heldout_group):
        raise UsageError("give the held-out files with --heldout or with --heldout-group")

    def files(items: list[str]) -> list[Path]:
        for item in items:
            if _input_path(item).is_dir():
                raise DataError(f"{item} is a directory; give the files in it")
        return [Path(i) for i in items]

    def grouped(pairs: list[tuple[str, str]]) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for name, item in pairs:
            out.setdefault(name, []).extend(files([item]))
        return out

    train_data = files(args.train) if args.train else grouped(args.train_group)
    heldout = files(args.heldout) if args.heldout else grouped(args.heldout_group)
    sizes: int | list[int]
    try:
        sizes = [int(x) for x in args.sizes.split(",")] if "," in args.sizes else int(args.sizes)
    except ValueError:
        raise UsageError(
            f"--sizes takes a count or vocabulary sizes A,B,...: got {args.sizes!r}"
        ) from None
    directory = Path(args.output)
    if directory.exists() and not directory.is_dir():
        raise DataError(f"{directory} exists and is not a directory")
    names = ["report.md", "results.csv"]
    if not args.no_plots:
        names += [n for n in FIGURES if n != "premium.png" or args.heldout_group]
    if directory.is_dir():
        _check_new([directory / n for n in names], args.force)
    started = time.perf_counter()
    try:
        result = compare(
            configs,
            train=train_data,
            heldout=heldout,
            vocab_size=args.vocab_size,
            sizes=sizes,
            alpha=args.alpha,
            reference=args.reference,
            undertrained_below=args.undertrained_below,
            workers=args.workers,
            processes=not args.in_process,
            progress=False if args.quiet else (True if args.progress else None),
            errors=args.errors,
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    except (InvalidTextError, OSError, ImportError):
        raise
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    written = result.report(directory, plots=not args.no_plots, overwrite=args.force)
    if not args.quiet:
        print(result.to_markdown(), end="")
        _note(
            f"bpeds compare: {_count(len(result.labels), 'configuration')} in "
            f"{time.perf_counter() - started:.1f} s; wrote {', '.join(str(p) for p in written)}"
        )
    for label, err in result.errors.items():
        _note(f"bpeds compare: configuration {label!r} failed: {err}")
    return EXIT_DATA if result.errors else EXIT_OK


# -- the parser ---------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
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


def _errors_option(p: argparse.ArgumentParser) -> None:
    """``--errors``: what invalid UTF-8 in the input does (see :func:`_decode`)."""
    p.add_argument(
        "--errors",
        choices=("strict", "replace"),
        default="strict",
        help="invalid UTF-8 in the input: strict (default) stops with an error naming the "
        "byte offset; replace reads it as U+FFFD",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``bpeds`` argument parser (every option has help)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="bpeds",
        description="Train, use, inspect and convert byte-level BPE tokenizers.",
        epilog=EPILOG,
        formatter_class=fmt,
    )
    parser.add_argument("--version", action="version", version=f"bpeds {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help: str, run: Callable[[argparse.Namespace], int]) -> Any:
        p = sub.add_parser(name, help=help, description=help, epilog=EPILOG, formatter_class=fmt)
        p.set_defaults(run=run)
        return p

    t = command("train", "Train a tokenizer on text files (or stdin).", cmd_train)
    t.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="UTF-8 text files to train on; '-' reads standard input (read whole). Each file "
        "is one unit: the split pattern never matches across two files.",
    )
    t.add_argument(
        "--group",
        action="append",
        type=_group_arg,
        metavar="NAME=FILE",
        help="instead of INPUTs: FILE's text belongs to group NAME (a language, say; "
        "repeatable, and a NAME given again adds files to its group). Groups are what "
        "--score group_frequency compares; the model records their names",
    )
    t.add_argument(
        "--counts",
        action="append",
        metavar="FILE",
        help="instead of INPUTs: train on pre-token counts written by 'bpeds count' "
        "(repeatable: the files are added up in the order given); the merges are those of "
        "training on the text they were counted from. The split pattern and special tokens "
        "are the counts'",
    )
    t.add_argument(
        "--vocab-size",
        type=int,
        required=True,
        metavar="N",
        help="tokens in the result: 256 bytes + merges + special tokens (so at least 256 + the "
        "number of special tokens)",
    )
    t.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="where to write the tokenizer"
    )
    t.add_argument(
        "-f",
        "--format",
        choices=_FORMATS,
        default="bpeds",
        help="output format (default: bpeds JSON, which keeps everything); minbpe writes "
        "PATH.model and PATH.vocab",
    )
    t.add_argument(
        "--pattern",
        metavar="P",
        help="split pattern: gpt2, gpt4, gpt4o, a regex, or none (no split); default: the "
        "preset's, else gpt4",
    )
    t.add_argument(
        "--special-token",
        action="append",
        metavar="TEXT",
        help="a special token (repeatable); ids follow the merges in the order given, and "
        "its text is cut out of the training data",
    )
    t.add_argument(
        "--preset",
        choices=_PRESETS,
        help="reproduce another trainer: minbpe-basic, minbpe-regex, hf (Hugging Face "
        "BpeTrainer with ByteLevel), rustbpe",
    )
    t.add_argument(
        "--score",
        metavar="NAME",
        help=f"what a merge maximises: {_SCORES} (default frequency); your own as "
        "module:attribute (a bpeds.scoring.Score subclass or object, or a @score_function; "
        "the module is imported from the current directory or PYTHONPATH); or a JSON object "
        'such as \'{"name": "pmi", "min_count": 3}\'',
    )
    t.add_argument(
        "--score-options",
        metavar="JSON",
        help="the score's options as a JSON object, e.g. '{\"min_count\": 2}' (the keyword "
        "arguments of its class)",
    )
    t.add_argument(
        "--base",
        metavar="MODEL",
        help="continue training from this model (any format 'bpeds import' reads): its "
        "tokens and merges keep their ids and ranks, new merges come after them, and "
        "--vocab-size counts its tokens too",
    )
    t.add_argument(
        "--variant",
        choices=variant_names(),
        help="a loop variant: picky (Picky BPE: removes intermediate tokens), scaffold "
        "(Scaffold-BPE: hides them from encoding) or superbpe (SuperBPE: a second stage "
        "whose tokens cross spaces); see docs/variants.md",
    )
    t.add_argument(
        "--variant-options",
        metavar="JSON",
        help="the variant's options as a JSON object, e.g. '{\"threshold\": 0.6}'",
    )
    t.add_argument(
        "--tie",
        choices=_TIES,
        help="which of equally scored pairs is merged first (default: the preset's, else "
        "smallest_ids; minbpe: leftmost; Hugging Face: hf)",
    )
    t.add_argument(
        "--min-frequency",
        type=int,
        metavar="N",
        help="never merge a pair seen fewer than N times (default 1)",
    )
    t.add_argument(
        "--max-token-length",
        type=int,
        metavar="N",
        help="never make a token longer than N bytes (default: no limit)",
    )
    t.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes that split and count the text (default: the cores available to this "
        "process; 1 starts none; the merges do not depend on it)",
    )
    _errors_option(t)
    t.add_argument("--force", action="store_true", help="replace output files that exist")
    noise = t.add_mutually_exclusive_group()
    noise.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print no progress bar and no summary (warnings and errors still)",
    )
    noise.add_argument(
        "--progress",
        action="store_true",
        help="always draw a progress bar on stderr (needs tqdm; by default a bar is drawn "
        "when stderr is a terminal and tqdm is installed)",
    )

    c = command(
        "count",
        "Count the pre-tokens of text files into a counts file, to train from later.",
        cmd_count,
    )
    c.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="UTF-8 text files (.gz, .bz2, .xz and, with zstandard installed, .zst are "
        "decompressed); a quoted glob such as 'data/**/*.txt' is expanded here, sorted. "
        "Each file is one unit, as for train",
    )
    c.add_argument("-o", "--output", required=True, metavar="PATH", help="the counts file to write")
    c.add_argument(
        "--add",
        action="append",
        metavar="COUNTS",
        help="a counts file to add to the result (repeatable; after the INPUTs, in the "
        "order given): with no INPUT, merges counts files",
    )
    c.add_argument(
        "--pattern",
        metavar="P",
        help="split pattern: gpt2, gpt4, gpt4o, a regex, or none (default gpt4); training "
        "from the counts uses it",
    )
    c.add_argument(
        "--special-token",
        action="append",
        metavar="TEXT",
        help="a special token whose text is cut out of the data (repeatable); training from "
        "the counts makes these the special tokens",
    )
    c.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local processes that split and count the text (default: the cores available)",
    )
    c.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="count on a Dask cluster, e.g. tcp://10.0.0.1:8786 (needs bpeds[dask]); each "
        "file is read by the worker that counts it, so the paths must be readable there",
    )
    c.add_argument(
        "--max-memory",
        type=_size_arg,
        metavar="SIZE",
        help="keep the table being counted under SIZE (512M, 4G, ...): sorted runs spill to "
        "disk and are merged exactly at the end, and the file is written without holding all "
        "the counts (default: no limit)",
    )
    c.add_argument(
        "--spill-dir",
        metavar="DIR",
        help="where --max-memory spills its runs (default: the system's temporary directory)",
    )
    c.add_argument(
        "--resume",
        metavar="DIR",
        help="make the count resumable: each file's counts are kept in DIR as soon as it is "
        "counted, and running the same command again skips the files done (the parts are "
        "deleted once the output is written)",
    )
    c.add_argument(
        "--min-count",
        type=int,
        default=1,
        metavar="N",
        help="leave out pieces counted fewer than N times in all: smaller counts, but merges "
        "made from the pairs inside those pieces can change (default 1: keep every piece)",
    )
    _errors_option(c)
    c.add_argument("--force", action="store_true", help="replace the output file if it exists")
    c.add_argument("-q", "--quiet", action="store_true", help="print no summary")

    e = command("encode", "Encode text to token ids.", cmd_encode)
    e.add_argument("model", help="the tokenizer model file")
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
    _errors_option(e)

    d = command("decode", "Decode token ids to text (written as raw bytes).", cmd_decode)
    d.add_argument("model", help="the tokenizer model file")
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

    i = command(
        "info",
        "Show a model's vocabulary size, pattern, special tokens, options and longest tokens.",
        cmd_info,
    )
    i.add_argument("model", help="the tokenizer model file")
    i.add_argument(
        "--top", type=int, default=5, metavar="N", help="list the N longest tokens (default 5)"
    )
    i.add_argument("--json", action="store_true", help="print the information as JSON")

    x = command("export", "Write a model in another tool's format.", cmd_export)
    x.add_argument("model", help="the tokenizer model file")
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

    m = command("import", "Convert another tool's files to a bpeds model (JSON).", cmd_import)
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

    c = command(
        "compare",
        "Train several configurations on the same text and compare them on held-out text.",
        cmd_compare,
    )
    c.add_argument(
        "--train",
        nargs="+",
        metavar="FILE",
        help="UTF-8 text files to train every configuration on",
    )
    c.add_argument(
        "--train-group",
        action="append",
        type=_group_arg,
        metavar="NAME=FILE",
        help="instead of --train: FILE's text belongs to training group NAME (repeatable; "
        "what --config score=group_frequency compares)",
    )
    c.add_argument("--heldout", nargs="+", metavar="FILE", help="UTF-8 text files to measure on")
    c.add_argument(
        "--heldout-group",
        action="append",
        type=_group_arg,
        metavar="NAME=FILE",
        help="instead of --heldout: FILE is held-out text of group NAME (a language, say; "
        "repeatable): adds tokens per byte and the premium per group",
    )
    c.add_argument(
        "--config",
        action="append",
        metavar="SPEC",
        help="a configuration (repeatable): bpeds train's arguments as KEY=VALUE,... "
        "(e.g. 'score=pmi,min_count=2' or 'tie=leftmost,vocab_size=8192'; keys that are not "
        "train's are options of the score or variant named before them; label=NAME names it), "
        "or a JSON object",
    )
    c.add_argument(
        "--model",
        action="append",
        metavar="FILE",
        help="a trained tokenizer to compare too (repeatable; measured, not trained)",
    )
    c.add_argument(
        "--vocab-size",
        type=int,
        metavar="N",
        help="vocabulary size of every --config that does not give vocab_size",
    )
    c.add_argument(
        "--sizes",
        default="8",
        metavar="N|A,B,...",
        help="measure each tokenizer at N sizes (all merges, half, a quarter, ...; default 8) "
        "or at the vocabulary sizes listed",
    )
    c.add_argument(
        "--alpha", type=float, default=2.5, metavar="A", help="order of the Renyi efficiency"
    )
    c.add_argument(
        "--reference",
        metavar="NAME",
        help="the held-out group the premium is relative to (default: the first)",
    )
    c.add_argument(
        "--undertrained-below",
        type=int,
        default=1,
        metavar="K",
        help="count merged tokens produced fewer than K times on the training data (default 1)",
    )
    c.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="configurations trained at the same time (default 1); each in its own process",
    )
    c.add_argument(
        "--in-process",
        action="store_true",
        help="train in this process, one configuration after the other (peak memory is then "
        "not measured)",
    )
    c.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="directory for report.md, results.csv and the plots (made if missing)",
    )
    c.add_argument("--no-plots", action="store_true", help="write no PNG (needs no matplotlib)")
    c.add_argument("--force", action="store_true", help="replace output files that exist")
    _errors_option(c)
    noise = c.add_mutually_exclusive_group()
    noise.add_argument(
        "-q", "--quiet", action="store_true", help="print no table, no progress and no summary"
    )
    noise.add_argument(
        "--progress", action="store_true", help="always draw a progress bar per configuration"
    )
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
        return int(args.run(args))
    except UsageError as exc:
        _note(f"{prog}: error: {exc}")
        return EXIT_USAGE
    except DataError as exc:
        _note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except FileExistsError as exc:
        _note(f"{prog}: error: {exc}".replace("pass overwrite=True", "pass --force"))
        return EXIT_DATA
    except FileNotFoundError as exc:
        _note(f"{prog}: error: no such file: {exc.filename or exc}")
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
        _note(f"{prog}: error: {where}{exc.strerror or exc}")
        return EXIT_DATA
    except ImportError as exc:
        _note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except (BpedsError, ValueError) as exc:
        _note(f"{prog}: error: {exc}")
        return EXIT_DATA
    except KeyboardInterrupt:
        _note(f"{prog}: interrupted")
        return EXIT_INTERRUPTED
    except RecursionError:
        _note(f"{prog}: error: the input is nested too deeply to process")
        return EXIT_DATA
    except MemoryError:
        _note(f"{prog}: error: out of memory (the input is too large for this machine)")
        return EXIT_DATA
