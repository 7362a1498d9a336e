"""Corpus representations the merge driver trains on.

- :class:`TypeCorpus` (*type mode*): unique pre-tokens ("types") with their
  counts, a pair -> types :class:`~bpeds.structures.LazyIndex` with a
  compaction policy, and windowed updates around each merge site. A merge
  costs O(size of the types that contain the pair). This is the mode that
  scales: a corpus of gigabytes has a few million types.
- :class:`SequenceCorpus` (*sequence mode*): the whole token sequence in an
  :class:`~bpeds.structures.IndexedList`, chunks separated so no pair spans
  two chunks. This is what minbpe's Basic (one chunk) and Regex tokenizers do;
  a merge costs O(occurrences of the pair).

Both take *chunks*: byte strings (or sequences of byte values 0..255) that
pairs never cross, optionally each with a *group* (a language, for per-group
scores). Both count pairs *overlapping* (``aaaa`` holds ``(a, a)`` three times,
as minbpe, Hugging Face and rustbpe do) or, in type mode only,
*non-overlapping* (greedy from the left: twice).

A corpus object keeps its input and builds fresh working state for each run,
so it can be trained on more than once. Not handled here: splitting text into
chunks (see :mod:`bpeds.tokenizer.pretokenize`) and special tokens.
"""

from bpeds.corpus.base import (
    Corpus,
    CorpusRun,
    Counting,
    Initial,
    MergeDeltas,
    count_pairs,
)
from bpeds.corpus.sequence_mode import SequenceCorpus
from bpeds.corpus.type_mode import TypeCorpus

__all__ = [
    "Corpus",
    "CorpusRun",
    "Counting",
    "Initial",
    "MergeDeltas",
    "SequenceCorpus",
    "TypeCorpus",
    "count_pairs",
]
