"""Regenerate ``tests/data/metrics_golden.json`` and ``metrics_tokenizer.json``: TokEval's
fertility and Tokenizer Fairness Gini on FLORES text.

The reference is TokEval (GitHub ``swiss-ai/tokenizer-intrinsic-evals``, the package
``tokenizer_analysis``: ``metrics/basic.py`` and ``metrics/gini.py``; they need ``numpy`` and
``scipy``). Check it out anywhere, make an environment with ``numpy``, ``scipy`` and
``tokenizers``, and run, from this repository's root::

    PYTHON tests/data/make_metrics_golden.py PATH/TO/tokenizer-intrinsic-evals

This script imports nothing from ``bpeds``. It trains a byte-level BPE tokenizer with Hugging
Face ``tokenizers`` (``BpeTrainer``, 1,000 tokens, ByteLevel without a prefix space) on the
first 120 lines of each language of ``flores/``, saves it as ``metrics_tokenizer.json`` (the
test loads it into bpeds), encodes each language's last 60 lines as one text, and computes
with TokEval's own classes (imported without the package's ``__init__``, which pulls in its
plotting) the fertility per language (tokens per whitespace-separated word, one sample per
language) and the Tokenizer Fairness Gini of the tokens per UTF-8 byte.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from importlib.metadata import version
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
LANGUAGES = ("en", "ru", "zh", "ja", "ko")
TRAIN_LINES = 120


def texts() -> tuple[list[str], dict[str, str]]:
    train, heldout = [], {}
    for lang in LANGUAGES:
        lines = (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines(True)
        train += lines[:TRAIN_LINES]
        heldout[lang] = "".join(lines[TRAIN_LINES:])
    return train, heldout


def tokenizer(train: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(train, trainer)
    return tok


def tokeval(repo: Path) -> tuple[Any, Any, Any]:
    """TokEval's metric classes, its configuration and its data type, without running the
    package's ``__init__`` (which imports its plotting)."""
    root = repo / "tokenizer_analysis"
    for name, path in (
        ("tokenizer_analysis", root),
        ("tokenizer_analysis.metrics", root / "metrics"),
    ):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    sys.path.insert(0, str(repo))
    basic = importlib.import_module("tokenizer_analysis.metrics.basic")
    gini = importlib.import_module("tokenizer_analysis.metrics.gini")
    config = importlib.import_module("tokenizer_analysis.config")
    types_ = importlib.import_module("tokenizer_analysis.core.input_types")
    return (basic.BasicTokenizationMetrics, gini.TokenizerGiniMetrics), config, types_


class Provider:
    """The least of TokEval's InputProvider the two metrics read."""

    def __init__(self, data: dict[str, list[Any]]) -> None:
        self.data = data

    def get_tokenizer_names(self) -> list[str]:
        return list(self.data)

    def get_tokenized_data(self) -> dict[str, list[Any]]:
        return self.data

    def get_vocab_size(self, name: str) -> int:
        return 1000


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    repo = Path(sys.argv[1])
    train, heldout = texts()
    tok = tokenizer(train)
    tok.save(str(DATA / "metrics_tokenizer.json"))
    (basic_cls, gini_cls), config, types_ = tokeval(repo)
    data = {
        "t": [
            types_.TokenizedData("t", lang, tok.encode(text).ids, text)
            for lang, text in heldout.items()
        ]
    }
    words = config.TextMeasurementConfig(method=config.NormalizationMethod.WORDS)
    nbytes = config.TextMeasurementConfig(method=config.NormalizationMethod.BYTES)
    fertility = basic_cls(Provider(data), measurement_config=words).compute_fertility_analysis(data)
    per_language = fertility["fertility"]["per_tokenizer"]["t"]["per_language"]
    tfg = gini_cls(Provider(data), measurement_config=nbytes).compute_tokenizer_fairness_gini(data)
    result = tfg["per_tokenizer"]["t"]
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "made_by": "swiss-ai/tokenizer-intrinsic-evals tokenizer_analysis metrics, unpatched",
        "reference_commit": commit,
        "python": sys.version.split()[0],
        "versions": {p: version(p) for p in ("numpy", "scipy", "tokenizers")},
        "tokenizer": "metrics_tokenizer.json",
        "heldout": "the lines of flores/LANG.txt after the first 120, one text per language",
        "fertility": {lang: per_language[lang]["mean"] for lang in LANGUAGES},
        "token_gini": result["gini_coefficient"],
        "tokens_per_byte": result["language_costs"],
    }
    out = DATA / "metrics_golden.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out.name}: gini {doc['token_gini']:.4f}")


if __name__ == "__main__":
    main()
