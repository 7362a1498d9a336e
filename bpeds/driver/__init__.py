"""The merge driver: one loop over a corpus representation, a selection structure and a score.

:class:`MergeDriver` runs the loop (:mod:`bpeds.driver.loop`); each mechanism it
calls is a named object of its own module: the count table
(:mod:`~bpeds.driver.counts`), the pricing of a pair (:mod:`~bpeds.driver.pricing`),
selection and its epoch and view policies (:mod:`~bpeds.driver.selection`),
re-scoring (:mod:`~bpeds.driver.rescoring`), the variant's loop
(:mod:`~bpeds.driver.variant_loop`), all chosen once from the score's declaration
(:mod:`~bpeds.driver.plan`) and held by :class:`~bpeds.driver.state.RunState`.
"""

from bpeds.driver.loop import MergeDriver, MergeRecord, Progress, train_merges
from bpeds.driver.selection import MultisetFactory

__all__ = ["MergeDriver", "MergeRecord", "MultisetFactory", "Progress", "train_merges"]
