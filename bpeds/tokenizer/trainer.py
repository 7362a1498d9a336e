"""Training below the Tokenizer: :func:`bpeds.train`'s arguments in, a model description out.

:func:`train_model` reads the data as units (see :mod:`bpeds.tokenizer.io`: each
``str`` item and each file is one unit the pattern sees on its own; special-token
text is cut out), splits it with the pattern, counts the pieces (type mode) or
keeps them in order (sequence mode), runs :class:`~bpeds.driver.MergeDriver` for
:func:`merges_for` merges and returns a
:class:`~bpeds.tokenizer.trained.TrainedModel`. :func:`bpeds.train` and the
in-place ``Tokenizer.train`` build the tokenizer from it; their documentation
(:func:`bpeds.tokenizer.training.train`) says what each argument does.

The concerns around the run live next to it: counting
(:mod:`~bpeds.tokenizer.pieces`), presets (:mod:`~bpeds.tokenizer.presets`),
groups (:mod:`~bpeds.tokenizer.groups`), continued training
(:mod:`~bpeds.tokenizer.continued`) and SuperBPE's two stages
(:mod:`~bpeds.tokenizer.superbpe`). Data given as
:class:`~bpeds.tokenizer.counts.Counts` is trained on exactly as the text it was
counted from.

Not handled here: the merge algorithm itself (:mod:`bpeds.driver`), encoding,
and loading a base from a model file (:func:`bpeds.train` does that).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord, MultisetFactory
from bpeds.scoring.base import Score, reporting_score_errors
from bpeds.scoring.registry import describe_score, get_score
from bpeds.scoring.ties import SmallestIds, TieRule, tie_rule
from bpeds.tokenizer import pieces
from bpeds.tokenizer.boundless import WordPass
from bpeds.tokenizer.continued import BaseModel, Continuation
from bpeds.tokenizer.counts import Counts
from bpeds.tokenizer.groups import check_groups, dev_groups, grouped_corpus, groups_of, named
from bpeds.tokenizer.io import (
    DEFAULT_BLOCK_SIZE,
    check_block_size,
    check_data,
    check_errors,
    check_int,
    data_size,
    iter_segments,
    refuse_file_names,
)
from bpeds.tokenizer.normalize import Form, check_normalizer, normalized
from bpeds.tokenizer.presets import PRESETS, PresetDefault, resolve_preset
from bpeds.tokenizer.pretokenize import pattern_label, resolve_pattern
from bpeds.tokenizer.progress import JobProgress, Progress, resolve_progress
from bpeds.tokenizer.special import check_special_ids, special_list, special_texts
from bpeds.tokenizer.stops import EarlyStop
from bpeds.tokenizer.superbpe import Stages, check_two_runs
from bpeds.tokenizer.trained import TrainedModel
from bpeds.tokenizer.unicode_tables import check_unicode
from bpeds.variants import Variant, get_variant
from bpeds.vocab import BYTE_TOKENS, Vocab

__all__ = ["OnMerge", "TrainArguments", "merges_for", "train_model"]

#: Called after every merge with its record and the new token's bytes.
OnMerge = Callable[[MergeRecord, bytes], None]

# Warnings name the line that called bpeds.train: a warning raised in a method of _Run
# (called by _train_once, called by train_model, called by train) is this many frames up.
_CALLER = 5


@dataclass(frozen=True)
class TrainArguments:
    """The keyword arguments of :func:`bpeds.train`, as given (checked by the run).

    ``base`` is a loaded tokenizer (a :class:`~bpeds.tokenizer.continued.BaseModel`);
    :func:`bpeds.train` loads one given as a path. The defaults are ``bpeds.train``'s.
    """

    pattern: str | PresetDefault | None = PresetDefault.PATTERN
    unicode: str | PresetDefault | None = PresetDefault.UNICODE
    special_tokens: Iterable[str] | Mapping[str, int] = ()
    min_frequency: int = 1
    max_token_length: int | None = None
    score: Score | str | dict[str, Any] = "frequency"
    variant: Variant | str | dict[str, Any] | None = None
    tie: TieRule | str | PresetDefault = PresetDefault.TIE
    representation: str | PresetDefault = PresetDefault.REPRESENTATION
    counting: str = "overlapping"
    multiset: MultisetFactory | None = None
    workers: int | None = None
    progress: bool | Progress | None = None
    preset: str | None = None
    errors: str = "strict"
    on_merge: OnMerge | None = None
    block_size: int = DEFAULT_BLOCK_SIZE
    base: BaseModel | None = None
    normalizer: str | None = None  # None: the base's, or none


def merges_for(vocab_size: int, special_tokens: int, start: int = BYTE_TOKENS) -> int:
    """The merges a run learns to reach ``vocab_size`` tokens: ``vocab_size`` less the
    ``start`` tokens it begins with (the 256 bytes, or a base's whole vocabulary) and
    the ``special_tokens`` it adds. Negative when ``vocab_size`` is too small.

    >>> merges_for(1000, 2)
    742
    """
    return vocab_size - start - special_tokens


def train_model(
    data: object, vocab_size: int, arguments: TrainArguments | None = None
) -> TrainedModel:
    """What :func:`bpeds.train` trains on ``data``, as a model description.

    >>> model = train_model("low lower lowest", 259, TrainArguments(pattern="gpt2"))
    >>> model.merges
    [(108, 111), (256, 119), (32, 257)]

    ``arguments``: :func:`bpeds.train`'s keyword arguments (default: its defaults),
    with ``base`` a loaded tokenizer. Errors, warnings and cost are ``bpeds.train``'s:
    every argument is checked before any data is read.
    """
    args = TrainArguments() if arguments is None else arguments
    counted = counts_in(data)
    if counted is not None:
        args = replace(args, **counts_options(counted, args))
    if args.variant is not None:
        variant = get_variant(args.variant)
        if (variant.switches or variant.supermerges) and counted is not None:
            does = "splits the text a second time" if variant.switches else "reads it again"
            raise ValueError(
                f"variant {variant.name!r} {does} for its second run, which counts cannot "
                "give: train it on the text"
            )
        if variant.switches:
            return _train_stages(variant, data, vocab_size, args)
        if variant.supermerges:
            return _train_supermerges(variant, data, vocab_size, args)
    return _train_once(data, vocab_size, args)


def _train_supermerges(
    variant: Variant, data: object, vocab_size: int, args: TrainArguments
) -> TrainedModel:
    """Two passes for a variant that joins whole pre-tokens (BoundlessBPE): the word-level
    pass with the variant, then the second pass on the runs of whole-word pre-tokens,
    its supermerges competing with the first pass's merges (:mod:`bpeds.tokenizer.boundless`).
    O(the two runs + reading the data twice)."""
    texts = check_two_runs(variant, data, args.special_tokens, args.base, args.representation)
    counts: list[int] = []
    user = args.on_merge

    def note(record: MergeRecord, token: bytes) -> None:
        counts.append(record.count)
        if user is not None:
            user(record, token)

    words = replace(args, special_tokens=texts, on_merge=note)
    run = _Run(data, vocab_size, words)
    if run.source is None:
        raise ValueError(
            f"variant {variant.name!r} joins pre-tokens: give a split pattern, not pattern=None"
        )
    first = _train_once(data, vocab_size, words)
    word = WordPass(first, counts)
    runs = word.runs(data, run.source, variant.superword, texts, run.errors, run.block_size)  # type: ignore[attr-defined]
    second = variant.second_pass(word.counts, word.sizes)  # type: ignore[attr-defined]
    limit = len(word.counts) + 1
    driver = MergeDriver(
        word.corpus(runs),
        limit,
        score=run.score,
        tie=run.tie,
        counting=run.counting,  # type: ignore[arg-type]
        min_count=run.min_frequency,
        vocab=word.vocab,
        variant=second,
        max_merges=limit,
    )
    with gc_paused():
        driver.run()
    options = dict(first.options)
    options["supermerges"] = {
        "runs": len(runs),
        "word_merges": len(word.counts),
        "kept_merges": second.kept,
        "made": len(driver.records),
    }
    return word.model(
        [e for e in driver.events if e.kind == "merge"], driver.vocab, second.kept, texts, options
    )


def _train_stages(
    variant: Variant, data: object, vocab_size: int, args: TrainArguments
) -> TrainedModel:
    """Two runs for a variant that switches pre-tokenization (SuperBPE): ordinary
    training to the switch, then training continued from it on the second pattern's
    chunks, with the variant's pair rule. O(the two runs)."""
    stages = Stages(variant, data, vocab_size, args.special_tokens, args.base, args.representation)
    ordinary = replace(
        args,
        special_tokens=(),
        variant=None,
        representation=PresetDefault.REPRESENTATION,
    )
    first = _train_once(data, stages.first_size, ordinary, "stage 1/2: ")
    second = _train_once(
        data,
        stages.vocab_size,
        replace(
            ordinary,
            pattern=stages.pattern,
            special_tokens=stages.texts,
            variant=variant,
            preset=None,
            base=first,
        ),
        "stage 2/2: ",
    )
    return stages.model(first, second)


def _train_once(
    data: object, vocab_size: int, args: TrainArguments, stage: str = ""
) -> TrainedModel:
    """One run of the merge loop: arguments checked, the corpus built, merged, recorded."""
    run = _Run(data, vocab_size, args, stage)
    # The cyclic collector would re-scan the growing corpus structures over and over
    # (see bpeds._gc); reference counting frees everything training drops.
    with gc_paused():
        corpus, vocab = run.corpus(data)
        driver = MergeDriver(
            corpus,
            run.num_merges,
            score=run.score,
            tie=run.tie,
            multiset=args.multiset,
            counting=run.counting,  # type: ignore[arg-type]
            min_count=run.min_frequency,
            max_token_length=run.max_token_length,
            variant=run.variant,
            vocab=vocab,
        )
        run.job.pairs(run.num_merges)
        score_name = str(describe_score(args.score, run.score)["name"])
        try:
            for record in _reporting(driver, score_name):
                run.job.merged()
                if args.on_merge is not None:
                    args.on_merge(record, driver.vocab.token_bytes(record.new_id))
        finally:
            run.job.close()
    return run.model(driver, corpus)


def _reporting(driver: MergeDriver, score_name: str) -> Iterator[MergeRecord]:
    """The driver's records; an exception raised in the score's own code (a user's,
    perhaps) becomes a ``ScoreError`` naming the score (:func:`reporting_score_errors`).
    What the caller does with each record (``on_merge``) is outside it. O(1) per record."""
    with reporting_score_errors(score_name):
        yield from driver


class _Run:
    """One run's arguments, checked before any data is read (in the order of the
    documentation's errors), and what the run reads, builds and records."""

    def __init__(
        self, data: object, vocab_size: int, args: TrainArguments, stage: str = ""
    ) -> None:
        self.args = args
        self.base = None if args.base is None else Continuation(args.base)
        pattern, unicode, tie = args.pattern, args.unicode, args.tie
        if self.base is not None and args.preset is None:
            if pattern is PresetDefault.PATTERN:
                pattern = self.base.pattern
            if unicode is PresetDefault.UNICODE:
                unicode = self.base.unicode
            if tie is PresetDefault.TIE:
                tie = self.base.tie() or tie
        given = {
            "pattern": pattern,
            "unicode": unicode,
            "representation": args.representation,
            "tie": tie,
        }
        opts = resolve_preset(args.preset, given)
        self.source, _ = resolve_pattern(opts["pattern"], opts["unicode"])
        self.unicode: str | None = None if self.source is None else opts["unicode"]
        representation = opts["representation"]
        if representation not in ("type", "sequence"):
            raise ValueError(f"representation must be 'type' or 'sequence', got {representation!r}")
        self.representation: str = representation
        self.counting = args.counting
        if self.counting not in ("overlapping", "non_overlapping"):
            raise ValueError(
                f"counting must be 'overlapping' or 'non_overlapping', got {self.counting!r}"
            )
        self.sequence = representation == "sequence"
        if self.sequence and self.counting != "overlapping":
            raise ValueError("representation='sequence' counts pairs overlapping only")
        self.vocab_size = check_int(vocab_size, "vocab_size", None)  # the minimum: below
        self.min_frequency = check_int(args.min_frequency, "min_frequency", 1)
        self.max_token_length = args.max_token_length
        if self.max_token_length is not None:
            self.max_token_length = check_int(self.max_token_length, "max_token_length", 2)
        self.workers = pieces.check_workers(args.workers)
        self.block_size = check_block_size(args.block_size)
        if args.multiset is not None and not callable(args.multiset):
            raise TypeError(
                "multiset must be a factory f(tie=...) of a Multiset (a class such as "
                f"HeapyKiYay), got {type(args.multiset).__name__} {args.multiset!r}"
            )
        self.errors = check_errors(args.errors)
        self.normalizer = self._normalizer(args.normalizer)
        self.score = get_score(args.score)
        self.variant = None if args.variant is None else get_variant(args.variant)
        self.tie = tie_rule(opts["tie"])
        if self.base is not None and self.base.ids is not None and self.tie.name == "smallest_ids":
            # ties by the smallest ids are by the base's own ids (as bpe-continue breaks them)
            self.tie = SmallestIds(self.base.tie_order())
        self.job = JobProgress(resolve_progress(args.progress), stage)
        self._special_tokens(args.special_tokens)
        self._data(data)

    def _normalizer(self, given: str | None) -> Form | None:
        """The run's normaliser: the one given, else the base's; a base's must be kept."""
        own = None if self.base is None else self.base.normalizer
        if given is None:
            return own
        form = check_normalizer(given)
        if self.base is not None and form != own:
            raise ValueError(
                f"normalizer={given!r}, but the base normalises with {own!r}: continued "
                "training reads text as the base does (leave normalizer out)"
            )
        return form

    def _special_tokens(self, special_tokens: Iterable[str] | Mapping[str, int]) -> None:
        """The special texts, the merges to learn and, for a dict, the checked ids."""
        texts, given = special_texts(special_tokens)
        start = BYTE_TOKENS
        if self.base is not None:
            if self.representation != "type":
                raise ValueError("continued training (base=...) needs representation='type'")
            if given is not None:
                raise ValueError(
                    "with base=..., give special tokens as a list of texts: the base's keep "
                    "their ids and new ones come after the new merges"
                )
            texts = [t for t in texts if t not in self.base.special_tokens]
            start = self.base.size
            if merges_for(self.vocab_size, len(texts), start) < 0:
                raise ValueError(
                    f"vocab_size must be at least {start + len(texts)} (the base's {start} "
                    f"tokens + {len(texts)} new special tokens), got {self.vocab_size}"
                )
        self.num_merges = merges_for(self.vocab_size, len(texts), start)
        if self.num_merges < 0:
            raise ValueError(
                f"vocab_size must be at least {start + len(texts)} (256 byte tokens + "
                f"{len(texts)} special tokens), got {self.vocab_size}"
            )
        self.texts = texts
        self.given_ids = (
            None
            if given is None
            else check_special_ids(given, self.num_merges, merges_are=" that vocab_size asks for")
        )

    def _data(self, data: object) -> None:
        """The groups of ``data`` (or none), checked; file names given as text refused."""
        self.groups = groups_of(data)
        if self.groups is None:
            check_data(data)  # every path of a list is there before anything is read
        check_groups(self.score, self.groups)
        self.dev = dev_groups(self.score, self.groups)
        if self.base is not None and self.groups is not None:
            raise ValueError("continued training (base=...) takes ungrouped data")
        for part in [data] if self.groups is None else [part for _, part in self.groups]:
            refuse_file_names(part)

    def pieces_of(self, part: object, group: str | None = None) -> dict[str, int] | list[str]:
        """The pieces of one group's data (counts are read, not changed, by the corpus)."""
        if isinstance(part, Counts):
            return part._pieces
        segments = iter_segments(
            part,
            pattern=self.source,
            special_tokens=self.texts,
            errors=self.errors,
            block_size=self.block_size,
        )
        segments = normalized(self.normalizer, self.job.read(segments, data_size(part)))
        if group is not None:
            segments = named(group, segments)
        return pieces.count_pieces(
            segments,
            self.source,
            sequence=self.sequence,
            workers=self.workers,
            unicode=self.unicode,
        )

    def corpus(self, data: object) -> tuple[Corpus, Vocab | None]:
        """The corpus of ``data``, and the vocabulary it starts from (a base's, or None:
        the bytes). Warns if a score that compares groups finds fewer than two filled."""
        if self.groups is not None:
            corpus, filled = grouped_corpus(self.groups + self.dev, self.pieces_of, self.sequence)
            names = {name for name, _ in self.groups}
            filled = [name for name in filled[: len(self.groups)] if name in names]
            if self.score.declaration.groups and len(filled) < 2:
                warnings.warn(
                    f"score {self.score.name!r} compares groups, but only {len(filled)} of the "
                    f"{len(self.groups)} groups hold any text "
                    f"({', '.join(map(repr, filled)) or 'none'}): its merges are frequency's",
                    UserWarning,
                    stacklevel=_CALLER,
                )
            return corpus, None
        found = self.pieces_of(data)
        if isinstance(found, list):
            return SequenceCorpus(p.encode("utf-8") for p in found), None
        if self.base is not None:
            vocab = self.base.vocab()
            return self.base.corpus(found, vocab), vocab
        return TypeCorpus._from_pieces(found), None

    def model(self, driver: MergeDriver, corpus: Corpus) -> TrainedModel:
        """The model the run made: merges, special ids, the event log if encoding needs
        it, and the options that determine the merges. Warns if training stopped early."""
        vocab = driver.vocab
        merges = [vocab.parents(t) or (t, t) for t in range(BYTE_TOKENS, len(vocab))]
        start = 0 if self.base is None else len(self.base.merges)
        # A log that only makes each token once, in id order, is the merges list itself.
        made_once = len(driver.records) == len(merges) - start
        events: list[list[int | str]] | None = None
        if not (made_once and all(e.kind == "merge" for e in driver.events)):
            events = [["merge", BYTE_TOKENS + k, a, b] for k, (a, b) in enumerate(merges[:start])]
            events += [[e.kind, e.token, *e.parts] for e in driver.events]
        empty = not driver.records and _is_empty(corpus)
        short = EarlyStop.of(driver, self.vocab_size, self.min_frequency, empty)
        if short is not None:
            warnings.warn(short.message(), UserWarning, stacklevel=_CALLER)
        if self.base is not None:
            ids = self.base.special_ids(len(merges), self.texts, _CALLER)
        elif self.given_ids is not None:
            ids = self.given_ids
        else:
            ids = {t: BYTE_TOKENS + len(merges) + i for i, t in enumerate(self.texts)}
        own = None if self.base is None else self.base.own_ids(len(merges))
        return TrainedModel(
            merges,
            self.source,
            ids,
            self._recorded(driver),
            events,
            self.unicode,
            normalizer=self.normalizer,
            ids=own,
        )

    def _recorded(self, driver: MergeDriver) -> dict[str, Any]:
        """What the model records of how it was trained."""
        recorded = driver.options()
        recorded["score"] = describe_score(self.args.score, self.score)
        recorded["min_frequency"] = recorded.pop("min_count")
        recorded["representation"] = self.representation
        recorded["vocab_size"] = self.vocab_size
        if self.args.preset is not None:
            recorded["preset"] = self.args.preset
        if self.groups is not None:
            recorded["groups"] = [name for name, _ in self.groups]
        if self.base is not None:
            recorded["base"] = self.base.recorded()
        return recorded


def _is_empty(corpus: Corpus) -> bool:
    """Whether a corpus holds no bytes at all."""
    if isinstance(corpus, TypeCorpus | SequenceCorpus):
        return corpus.num_tokens == 0
    return False  # pragma: no cover - only our two representations are built here


# -- data given as counts ---------------------------------------------------------------------


def counts_in(data: object) -> Counts | None:
    """The first :class:`~bpeds.tokenizer.counts.Counts` of ``data`` (itself, or a
    mapping's values), else None.

    A mapping must hold counts for every group or for none (``TypeError``); all must
    have been split alike (``ValueError`` otherwise).
    """
    if isinstance(data, Counts):
        return data
    if not isinstance(data, Mapping):
        return None
    found = [isinstance(v, Counts) for v in data.values()]
    if not any(found):
        return None
    if not all(found):
        raise TypeError(
            "a mapping of groups must give counts for every group or for none (count the "
            "other groups with bpeds.count)"
        )
    parts = list(data.values())
    for other in parts[1:]:
        parts[0].compatible(other)
    first: Counts = parts[0]
    return first


def counts_options(counted: Counts, args: TrainArguments) -> dict[str, Any]:
    """The pattern and special tokens to train ``counted`` with, checked against how it
    was counted (``ValueError`` naming both); a sequence representation is refused
    (counts keep no order)."""
    made = counted.pattern
    pattern, preset = args.pattern, args.preset
    if isinstance(pattern, PresetDefault):
        if preset in PRESETS:
            want = resolve_pattern(PRESETS[preset]["pattern"])[0]
            if want != made:
                raise ValueError(
                    f"preset {preset!r} splits with pattern {pattern_label(want)}, but the "
                    f"counts were made with {pattern_label(made)}: count with the preset's "
                    "pattern"
                )
    elif resolve_pattern(pattern if pattern is None else str(pattern))[0] != made:
        raise ValueError(
            f"pattern={pattern!r} was given, but the counts were made with pattern "
            f"{pattern_label(made)}: leave pattern out (training uses the counts' pattern)"
        )
    if args.normalizer is not None:
        raise ValueError(
            "counts hold text already read, so a normalizer cannot apply to them: give "
            "normalizer= to the training on the text itself"
        )
    representation = args.representation
    if representation == "sequence" or (
        isinstance(representation, PresetDefault)
        and preset in PRESETS
        and PRESETS[preset]["representation"] == "sequence"
    ):
        raise ValueError(
            "counts hold distinct pieces without their order, so they train in type mode only: "
            "train a sequence representation (and the minbpe presets) on the text"
        )
    unicode = _counts_unicode(counted, args)
    texts = special_list(args.special_tokens)
    if not texts:
        return {
            "pattern": made,
            "unicode": unicode,
            "special_tokens": list(counted.special_tokens),
        }
    if set(texts) != set(counted.special_tokens):
        raise ValueError(
            f"special_tokens={texts!r}, but the counts were made cutting out "
            f"{list(counted.special_tokens)!r}: the special tokens must be the texts cut out "
            "when counting (leave special_tokens out to take the counts', or give their ids "
            "as a dict)"
        )
    return {"pattern": made, "unicode": unicode, "special_tokens": args.special_tokens}


def _counts_unicode(counted: Counts, args: TrainArguments) -> str | None:
    """The Unicode tables to train ``counted`` with: those asked for (or the preset's), else
    the counts'. Tables other than the counts' are fine when no counted piece holds a code
    point the two read differently (then splitting gave the same pieces); otherwise
    ``ValueError`` says how to count."""
    wanted = args.unicode
    if isinstance(wanted, PresetDefault):
        if args.preset not in PRESETS:
            return counted.unicode
        wanted = PRESETS[args.preset]["unicode"]
    wanted = check_unicode(wanted)
    if not counted.splits_alike(wanted):

        def tables(u: str | None) -> str:
            return "the regex module's Unicode tables" if u is None else f"Unicode {u}'s tables"

        raise ValueError(
            f"training reads the pattern with {tables(wanted)} (unicode={wanted!r}), but the "
            f"counts were made with {tables(counted.unicode)}, which split some of their "
            f"text differently: count with unicode={wanted!r}"
        )
    return wanted
