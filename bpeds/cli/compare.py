"""``bpeds compare``: train several configurations on the same text and compare them on
held-out text (see :func:`bpeds.compare`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bpeds.cli.common import (
    EXIT_DATA,
    EXIT_OK,
    DataError,
    UsageError,
    add_command,
    check_new,
    errors_option,
    group_arg,
    input_path,
    json_object,
    note,
    plural,
)
from bpeds.tokenizer.formats import load_model
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.pattern_safety import PatternTimeoutError
from bpeds.tokenizer.training import train


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
        return json_object(value, "--config", '{"score": "pmi", "vocab_size": 4096}')
    params = set(inspect.signature(train).parameters) - {"data", "files"}
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


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds compare``: train and measure the configurations, write the report;
    the exit status."""
    from bpeds.comparison import ConfigError, compare
    from bpeds.comparison.configs import label_of, model_label
    from bpeds.comparison.plots import FIGURES, figure_files

    configs: dict[str, Any] = {}
    for value in args.config or []:
        spec = _config_spec(value)
        label = spec.get("label")
        label = label if isinstance(label, str) else label_of(spec)
        if label in configs:
            raise UsageError(f"two configurations are labelled {label!r}: add label=NAME to one")
        configs[label] = spec
    for i, path in enumerate(args.model or []):
        input_path(path)
        model = load_model(path)
        # Labelled by its file and by what it records of its training.
        label = f"{Path(path).name}{model_label(i, model).removeprefix(f'tokenizer {i + 1}')}"
        configs[label if label not in configs else f"{label} [{i + 1}]"] = model
    if not configs:
        raise UsageError("give at least one --config (or --model, a trained tokenizer)")
    for what, plain, by_group in (
        ("training", args.train, args.train_group),
        ("held-out", args.heldout, args.heldout_group),
    ):
        option = "--train" if what == "training" else "--heldout"
        if plain and by_group:
            raise UsageError(
                f"give the {what} files with {option} or with {option}-group, not both"
            )
        if not plain and not by_group:
            raise UsageError(
                f"give the {what} files: {option} FILE... (or {option}-group NAME=FILE)"
            )

    def files(items: list[str]) -> list[Path]:
        for item in items:
            if input_path(item).is_dir():
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
        names += figure_files([n for n in FIGURES if n != "premium" or args.heldout_group])
    if directory.is_dir():
        check_new([directory / n for n in names], args.force)
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
    except (InvalidTextError, PatternTimeoutError, OSError, ImportError):
        raise
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    written = result.report(directory, plots=not args.no_plots, overwrite=args.force)
    if not args.quiet:
        print(result.to_markdown(), end="")
        note(
            f"bpeds compare: {plural(len(result.labels), 'configuration')} in "
            f"{time.perf_counter() - started:.1f} s; wrote {', '.join(str(p) for p in written)}"
        )
    for label, err in result.errors.items():
        note(f"bpeds compare: configuration {label!r} failed: {err}")
    return EXIT_DATA if result.errors else EXIT_OK


def register(sub: Any) -> None:
    """Add ``bpeds compare`` and its options to the subcommands ``sub``."""
    c = add_command(
        sub,
        "compare",
        "Train several configurations on the same text and compare them on held-out text.",
        run,
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
        type=group_arg,
        metavar="NAME=FILE",
        help="instead of --train: FILE's text belongs to training group NAME (repeatable; "
        "what --config score=group_frequency compares)",
    )
    c.add_argument("--heldout", nargs="+", metavar="FILE", help="UTF-8 text files to measure on")
    c.add_argument(
        "--heldout-group",
        action="append",
        type=group_arg,
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
    errors_option(c)
    noise = c.add_mutually_exclusive_group()
    noise.add_argument(
        "-q", "--quiet", action="store_true", help="print no table, no progress and no summary"
    )
    noise.add_argument(
        "--progress", action="store_true", help="always draw a progress bar per configuration"
    )
