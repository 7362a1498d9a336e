"""Training data in groups: ``{group name: data}``, each piece labelled with its group.

A group is a language, say: :func:`bpeds.train` reads and counts each group on
its own, and every piece keeps its group's index (in the mapping's order),
which per-group scores (``groups`` in their declaration, such as ``GroupFrequency``) read. A
score that compares groups refuses data of fewer than two groups, which would
make it do plain frequency's work at several times its cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
from bpeds.scoring.base import Score
from bpeds.tokenizer.io import InvalidTextError, check_data

__all__ = ["check_groups", "dev_groups", "grouped_corpus", "groups_of", "named"]


def groups_of(data: object) -> list[tuple[str, object]] | None:
    """``[(name, data), ...]`` of a mapping of groups (each value's shape checked by
    :func:`bpeds.tokenizer.io.check_data`), else None. A name that is not a ``str``
    raises ``TypeError``."""
    if not isinstance(data, Mapping):
        return None
    out: list[tuple[str, object]] = []
    for name, part in data.items():
        if not isinstance(name, str):
            raise TypeError(
                f"group names must be str (they are recorded with the model), got {name!r}"
            )
        try:
            check_data(part)
        except TypeError as exc:
            raise TypeError(f"group {name!r}: {exc}") from None
        out.append((name, part))
    return out


def check_groups(score: Score, groups: list[tuple[str, object]] | None) -> None:
    """A per-group score needs at least two groups: with one it is frequency, at a cost
    (``ValueError`` saying how to give groups)."""
    if not score.declaration.groups or (groups is not None and len(groups) >= 2):
        return
    if groups is None:
        have = "all the training data is one group"
    else:
        names = ", ".join(repr(n) for n, _ in groups)
        have = f"the training data has {len(groups)} group{'' if len(groups) == 1 else 's'}"
        have += f" ({names})" if names else ""
    raise ValueError(
        f"score {score.name!r} compares groups of text (it declares groups=True), but {have}, "
        "so it "
        "would give frequency's merges at several times the cost: give at least two groups, "
        "as a mapping {group name: texts or paths} (on the command line: --group NAME=FILE "
        "per file)"
    )


def dev_groups(score: Score, groups: list[tuple[str, object]] | None) -> list[tuple[str, object]]:
    """The development groups of a score that measures on held-out text per group
    (:attr:`~bpeds.scoring.base.Score.dev`), in the training groups' order, each its files
    as paths; ``[]`` for a score without. The names must be the training groups' names
    (``ValueError`` listing what differs) and the files must exist (``OSError``)."""
    dev = score.dev
    if dev is None:
        return []
    if groups is None:
        raise ValueError(
            f"score {score.name!r} measures on development text per group, but the training "
            "data is not a mapping of groups: give {group name: data}"
        )
    names = [name for name, _ in groups]
    if set(dev) != set(names):
        raise ValueError(
            f"score {score.name!r} has development text for groups {sorted(dev)}, but the "
            f"training groups are {sorted(names)}: give one development set per group"
        )
    out: list[tuple[str, object]] = [(name, [Path(p) for p in dev[name]]) for name in names]
    for name, part in out:
        try:
            check_data(part)
        except (OSError, TypeError) as exc:
            raise type(exc)(f"development set of group {name!r}: {exc}") from None
    return out


def named(name: str, segments: Iterator[str]) -> Iterator[str]:
    """``segments``, with the group's name put in front of an :class:`InvalidTextError`."""
    try:
        yield from segments
    except InvalidTextError as exc:
        raise InvalidTextError(f"group {name!r}: {exc}", exc.source, exc.offset) from None


def grouped_corpus(
    groups: list[tuple[str, object]],
    pieces_of: Callable[[object, str], dict[str, int] | list[str]],
    sequence: bool,
) -> tuple[Corpus, list[str]]:
    """The corpus of every group's pieces, each labelled with its group's index, and the
    names of the groups that hold any. Groups are counted one after the other (type mode
    keeps one group's counts at a time besides the corpus being built)."""
    filled: list[str] = []
    if sequence:
        chunks: list[bytes] = []
        labels: list[int] = []
        for g, (name, part) in enumerate(groups):
            pieces = pieces_of(part, name)
            assert isinstance(pieces, list)
            if pieces:
                filled.append(name)
            chunks += [p.encode("utf-8") for p in pieces]
            labels += [g] * len(pieces)
        return SequenceCorpus(chunks, labels), filled

    def items() -> Iterator[tuple[bytes, int, int]]:
        for g, (name, part) in enumerate(groups):
            counts = pieces_of(part, name)
            assert isinstance(counts, dict)
            if counts:
                filled.append(name)
            for p, n in counts.items():
                yield p.encode("utf-8"), n, g

    return TypeCorpus.from_counts(items()), filled
