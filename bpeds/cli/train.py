"""``bpeds train``: train a tokenizer on text files, groups of files or counts files."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    FORMATS,
    DataError,
    UsageError,
    add_command,
    add_unicode_option,
    check_new,
    errors_option,
    group_arg,
    input_path,
    json_object,
    load_counts,
    note,
    outputs,
    pattern_arg,
    plural,
    read_input,
    save,
    unicode_arg,
)
from bpeds.scoring.registry import get_score
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.normalize import NORMALIZERS
from bpeds.tokenizer.pattern_safety import PatternTimeoutError
from bpeds.tokenizer.presets import PRESETS
from bpeds.tokenizer.trainer import merges_for
from bpeds.tokenizer.training import train
from bpeds.variants import get_variant, variant_names

_SCORES = "frequency, length_weighted, pmi, npmi, likelihood_gain, wordpiece, group_frequency"
_TIES = ("smallest_ids", "leftmost", "lexicographic", "hf", "subword_nmt")


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds train``: check the options, read the data, train, save; the exit status."""
    specials: list[str] = args.special_token or []
    if merges_for(args.vocab_size, len(specials)) < 0:
        raise UsageError(
            f"--vocab-size {args.vocab_size} is too small: it counts the 256 byte tokens and "
            f"{plural(len(specials), 'special token')}, so it must be at least "
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
            return read_input("-", args.errors)
        p = input_path(item)
        if p.is_dir():
            raise DataError(f"{item} is a directory; give the files in it")
        return p

    data: Any
    if args.counts:
        data = load_counts(args.counts)
    elif args.group:
        data = {}
        for name, item in args.group:
            data.setdefault(name, []).append(unit(item))
    else:
        data = [unit(item) for item in args.inputs]
    check_new(outputs(args.format, args.output), args.force)
    options: dict[str, Any] = {
        "special_tokens": specials,
        "workers": args.workers,
        "errors": args.errors,
        "progress": False if args.quiet else (True if args.progress else None),
    }
    for key in (
        "pattern",
        "preset",
        "tie",
        "counting",
        "min_frequency",
        "max_token_length",
        "normalizer",
    ):
        value = getattr(args, key)
        if value is not None:
            options[key] = pattern_arg(value) if key == "pattern" else value
    if args.unicode is not None:
        options["unicode"] = unicode_arg(args.unicode)
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
    except (InvalidTextError, PatternTimeoutError, OSError, ImportError):
        raise
    except (ValueError, TypeError) as exc:  # train checks its arguments before reading data
        raise UsageError(str(exc)) from None
    for w in caught:
        note(f"bpeds train: warning: {w.message}")
    seconds = time.perf_counter() - started
    written = save(tok, args.format, args.output, args.force)
    if not args.quiet:
        note(
            f"bpeds train: {plural(tok.num_merges, 'merge')}, vocab size {tok.vocab_size}, in "
            f"{seconds:.1f} s; wrote {', '.join(str(p) for p in written)}"
        )
    return EXIT_OK


def _score_spec(value: str | None, options: str | None) -> str | dict[str, Any] | None:
    """What ``--score`` and ``--score-options`` ask for: a name, or a dict with "name"."""
    if value is None:
        if options is not None:
            raise UsageError("--score-options needs --score (the score they are options of)")
        return None
    spec: str | dict[str, Any] = value
    if value.lstrip().startswith("{"):
        spec = json_object(value, "--score", '{"name": "pmi"}')
    if options is None:
        return spec
    extra = json_object(options, "--score-options", '{"min_count": 2}')
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
    return {"name": value, **json_object(options, "--variant-options", '{"threshold": 0.6}')}


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


#: ``--normalizer``'s help.
NORMALIZER_HELP = (
    "Unicode normalisation applied to the text before it is split, in training and in every "
    "encoding (saved with the model); default: none"
)


def register(sub: Any) -> None:
    """Add ``bpeds train`` and its options to the subcommands ``sub``."""
    t = add_command(sub, "train", "Train a tokenizer on text files (or stdin).", run)
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
        type=group_arg,
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
        choices=FORMATS,
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
    add_unicode_option(t, "the preset's, else the base's, else regex")
    t.add_argument("--normalizer", choices=NORMALIZERS, help=NORMALIZER_HELP)
    t.add_argument(
        "--special-token",
        action="append",
        metavar="TEXT",
        help="a special token (repeatable); ids follow the merges in the order given, and "
        "its text is cut out of the training data",
    )
    t.add_argument(
        "--preset",
        choices=tuple(PRESETS),
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
        "smallest_ids; minbpe: leftmost; Hugging Face: hf; subword-nmt and parity-aware "
        "BPE's code: subword_nmt)",
    )
    t.add_argument(
        "--counting",
        choices=("overlapping", "non_overlapping"),
        help="how a run of equal tokens counts its pairs: every adjacent pair (the default) or "
        "as merging would take them, left to right (BoundlessBPE's authors count so)",
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
    errors_option(t)
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
