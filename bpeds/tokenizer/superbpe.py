"""SuperBPE's two stages: ordinary BPE to the switch, then training continued on chunks
of a second pattern that does not split at whitespace.

The variant itself (:class:`bpeds.variants.SuperBPE`: where the switch is, the
words-per-token rule) lives with the other loop variants; this module holds
what the tokenizer layer does for it: the second stage's pre-tokenization
(:data:`SUPERBPE_STAGE2`), the checks the two stages need of the training
arguments, the vocabulary size at the switch, and what the model records.
:func:`bpeds.tokenizer.trainer.train_model` runs the stages: stage 1 without
the variant, stage 2 from stage 1's model (continued training, by rank) on
the second pattern's chunks, with the variant's pair rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from bpeds.tokenizer.groups import groups_of
from bpeds.tokenizer.io import check_int
from bpeds.tokenizer.presets import PresetDefault
from bpeds.tokenizer.special import special_texts
from bpeds.tokenizer.trained import TrainedModel
from bpeds.variants import Variant
from bpeds.vocab import BYTE_TOKENS

__all__ = ["SUPERBPE_STAGE2", "Stages", "check_two_runs", "stage2_pattern"]

#: SuperBPE's default second-stage pattern: digits in groups of three counted from the
#: right (as the paper's stage 2 splits numbers), runs of newlines, and everything else
#: between them (spaces and punctuation included: superwords cross them).
SUPERBPE_STAGE2 = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|[^\p{N}\n]+|\n+"


def stage2_pattern(variant: Variant) -> str:
    """The pattern that cuts the second stage's chunks: the variant's ``stage2_pattern``,
    :data:`SUPERBPE_STAGE2` when it gives none."""
    pattern: str | None = getattr(variant, "stage2_pattern", None)
    return SUPERBPE_STAGE2 if pattern is None else pattern


def check_two_runs(
    variant: Variant,
    data: object,
    special_tokens: Iterable[str] | Mapping[str, int],
    base: object,
    representation: object,
) -> list[str]:
    """What a variant that trains in two runs over the same data (SuperBPE, BoundlessBPE)
    needs of the arguments: data it can read twice, ungrouped; no base; the ``type``
    representation; special tokens as a list of texts (returned). ``ValueError`` naming
    the argument otherwise."""
    name = variant.name
    if base is not None:
        raise ValueError(f"variant {name!r} trains from bytes: it takes no base")
    if representation not in (PresetDefault.REPRESENTATION, "type"):
        raise ValueError(f"variant {name!r} needs representation='type'")
    if isinstance(data, Iterator) or groups_of(data) is not None:
        raise ValueError(
            f"variant {name!r} reads the data twice (once per run): give "
            "a str, a path or a list of them, not a one-shot iterator or groups"
        )
    texts, given = special_texts(special_tokens)
    if given is not None:
        raise ValueError(f"with variant {name!r}, give special tokens as a list of texts")
    return texts


class Stages:
    """The two runs of a variant that switches pre-tokenization, checked before any data
    is read.

    ``texts``: the special tokens (a list of texts: the second stage numbers them
    after its merges). ``first_size``: stage 1's vocabulary size, bytes and merges only
    (``ValueError`` if the variant's switch does not lie in the run). The data must be
    readable twice and ungrouped; there is no base; the representation is ``type``.
    """

    def __init__(
        self,
        variant: Variant,
        data: object,
        vocab_size: object,
        special_tokens: Iterable[str] | Mapping[str, int],
        base: object,
        representation: object,
    ) -> None:
        texts = check_two_runs(variant, data, special_tokens, base, representation)
        self.vocab_size = check_int(vocab_size, "vocab_size", 0)
        first = BYTE_TOKENS + len(texts)
        if self.vocab_size < first:
            raise ValueError(
                f"vocab_size must be at least {first} (256 byte tokens + {len(texts)} special "
                f"tokens), got {self.vocab_size}"
            )
        self.variant = variant
        self.texts = texts
        self.pattern = stage2_pattern(variant)
        size: int = variant.stage1_size(first, self.vocab_size)  # type: ignore[attr-defined]
        self.first_size = size - len(texts)

    def model(self, stage1: TrainedModel, stage2: TrainedModel) -> TrainedModel:
        """The tokenizer's model: stage 2's merges, pattern and special tokens; its options
        record the variant and stage 1's merges and pattern, not a base."""
        recorded: dict[str, Any] = dict(stage2.options)
        described = self.variant.describe()
        if "stage2_pattern" in described:
            described["stage2_pattern"] = self.pattern
        recorded["variant"] = described
        recorded["stage1"] = {"merges": len(stage1.merges), "pattern": stage1.pattern}
        recorded.pop("base", None)
        return TrainedModel(stage2.merges, stage2.pattern, stage2.special_tokens, recorded)
