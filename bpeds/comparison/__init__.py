"""Compare tokenizers: train configurations on the same text, measure them on held-out text.

:func:`compare` (also ``bpeds.compare``) takes configurations (anything
:func:`bpeds.train` takes, as dicts, or tokenizers already trained), trains them
on the same data and measures every one on the same held-out text, at several
vocabulary sizes:
BPE's merges form a prefix, so one training run gives the tokenizer of every
smaller size by keeping its first merges. The result is a :class:`Comparison`:
rows of metrics (one per configuration and vocabulary size), CSV and Markdown
tables, plots (matplotlib, the ``compare`` extra) and a report.

>>> c = compare(
...     [{"score": "frequency"}, {"score": "pmi", "label": "pmi"}],
...     train="low lower lowest newer newest " * 20,
...     heldout="the lowest newer",
...     vocab_size=270,
...     sizes=[262, 270],
... )
>>> [(r["config"], r["vocab_size"]) for r in c.rows]
[('score=frequency', 262), ('score=frequency', 270), ('pmi', 262), ('pmi', 270)]
>>> c.row("score=frequency")["bytes_per_token"] > c.row("score=frequency", 262)["bytes_per_token"]
True

The metrics are defined, with their sources, in ``docs/compare.md``;
:data:`METRICS` lists the columns. The pre-tokens of the training data are
counted once per distinct way of reading it (pattern and special tokens) and
every configuration that reads it that way trains on the same counts
(``bpeds.train(counts, ...)``); the held-out text is counted once per pattern.
A configuration with an option this module does not know how to share (a loop
variant, say) or in the sequence representation (counts keep no order) is
handed to :func:`bpeds.train` as it is and reads the data itself.

The package's modules: :mod:`~bpeds.comparison.metrics` (the metrics, and
measuring one tokenizer), :mod:`~bpeds.comparison.configs` (configurations and
which share counts), :mod:`~bpeds.comparison.runs` (the shared counting, a run
per configuration, :func:`compare`), :mod:`~bpeds.comparison.report`
(:class:`Comparison`) and :mod:`~bpeds.comparison.plots` (the figures). They are
built on bpeds's public API only: training is :func:`bpeds.train`, counting
:func:`bpeds.count`.
"""

from bpeds.comparison.configs import ConfigError
from bpeds.comparison.metrics import (
    METRICS,
    jaccard,
    merge_depths,
    renyi_efficiency,
    shannon_efficiency,
    spearman,
)
from bpeds.comparison.report import Comparison
from bpeds.comparison.runs import compare

__all__ = [
    "METRICS",
    "Comparison",
    "ConfigError",
    "compare",
    "jaccard",
    "merge_depths",
    "renyi_efficiency",
    "shannon_efficiency",
    "spearman",
]
