"""Training on groups of text: ``bpeds.train({name: data}, ...)`` and per-group scores."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import Counting
from bpeds.scoring import Declaration, Dependency, GroupFrequency, Score, Stats, Views
from bpeds.testing.oracle import brute_force_merges
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.io import InvalidTextError, iter_units
from bpeds.tokenizer.pretokenize import PATTERNS, split
from bpeds.tokenizer.training import train
from tests.budget import profile_examples

SWIFT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")
ENGLISH = SWIFT[:6000]
GERMAN = (
    "Die Sängerin veröffentlichte ihr erstes Album im Jahr 2006. Schon bald wurde sie "
    "für ihre Lieder über ihr eigenes Leben bekannt, und ihre Konzerte waren überall "
    "ausverkauft. Später wechselte sie von der Countrymusik zur Popmusik. "
) * 3


NUMBERS = " ".join(str(k * k * 7919 % 100000) for k in range(150))


def oracle_pairs(
    groups: dict[str, list[str]],
    num_merges: int,
    score: Score | str,
    tie: str = "smallest_ids",
    counting: Counting = "overlapping",
) -> list[tuple[int, int]]:
    """The brute-force oracle's merges on the pieces ``train`` makes of ``groups``."""
    chunks: list[bytes] = []
    labels: list[int] = []
    for g, texts in enumerate(groups.values()):
        for t in texts:
            pieces = list(split(t, PATTERNS["gpt2"]))
            chunks += pieces
            labels += [g] * len(pieces)
    return [
        r.pair
        for r in brute_force_merges(
            chunks, num_merges, groups=labels, score=score, tie=tie, counting=counting
        )
    ]


def test_group_frequency_turns_to_the_worse_compressed_group() -> None:
    data = {"en": "the the the the", "de": "der der"}
    grouped = train(data, 258, pattern="gpt2", score="group_frequency")
    plain = train(data, 258, pattern="gpt2")
    # Both start with "he" (equal ratios: group 0 first, its pairs tie, smallest ids win).
    # Then English holds fewer tokens per byte, so the per-group score serves German.
    assert [grouped.token_bytes(i) for i in (256, 257)] == [b"he", b"de"]
    assert [plain.token_bytes(i) for i in (256, 257)] == [b"he", b"the"]


def test_group_frequency_evens_out_compression() -> None:
    # A small group whose pairs plain frequency leaves for later: numbers among English.
    data = {"en": ENGLISH, "num": NUMBERS}
    merges = 60
    grouped = train(data, 256 + merges, pattern="gpt2", score="group_frequency")
    plain = train(data, 256 + merges, pattern="gpt2")
    assert grouped.merges != plain.merges
    assert grouped.options["groups"] == ["en", "num"]
    assert grouped.options["score"] == {"name": "group_frequency"}

    def per_byte(tok: Tokenizer, text: str) -> float:
        return len(tok.encode_ordinary(text)) / len(text.encode("utf-8"))

    # The numbers get many more merges of their own ...
    assert per_byte(grouped, NUMBERS) < 0.9 * per_byte(plain, NUMBERS)
    assert per_byte(grouped, ENGLISH) > per_byte(plain, ENGLISH)
    # ... and the worse-compressed group is compressed better than under frequency.
    worst = [max(per_byte(t, ENGLISH), per_byte(t, NUMBERS)) for t in (grouped, plain)]
    assert worst[0] < worst[1]


@pytest.mark.filterwarnings("ignore:training stopped after:UserWarning")  # tiny corpora
@pytest.mark.parametrize("tie", ["smallest_ids", "leftmost"])
@pytest.mark.parametrize("representation", ["type", "sequence"])
@pytest.mark.parametrize(
    "groups",
    [
        {"en": [ENGLISH[:1500]], "de": [GERMAN[:600]]},
        {"a": ["the the the the"], "b": ["der der", "die die die"]},
        {"x": ["aaaa bbbb aaaa"], "y": ["abab abab"], "z": ["ba ba ba ba ba"]},
    ],
    ids=["en-de", "tiny", "three"],
)
def test_group_frequency_equals_the_oracle(
    groups: dict[str, list[str]], representation: str, tie: str
) -> None:
    merges = 40
    tok = train(
        groups,
        256 + merges,
        pattern="gpt2",
        score="group_frequency",
        representation=representation,
        tie=tie,
    )
    assert tok.merges == oracle_pairs(groups, merges, GroupFrequency(), tie)


def grouped_texts(alphabet: str, max_size: int, max_groups: int) -> Any:
    """Two to ``max_groups`` groups of one to three short texts."""
    texts = st.lists(st.text(alphabet=alphabet, max_size=max_size), min_size=1, max_size=3)
    return st.lists(texts, min_size=2, max_size=max_groups)


@settings(max_examples=profile_examples(local=30))
@given(grouped_texts("ab c", 12, 3))
def test_group_frequency_equals_the_oracle_on_random_groups(texts: list[list[str]]) -> None:
    groups = {f"g{i}": t for i, t in enumerate(texts)}
    want = oracle_pairs(groups, 12, GroupFrequency())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # groups may be empty, runs may stop early
        got = train(groups, 256 + 12, pattern="gpt2", score="group_frequency")
    assert got.merges == want


def test_frequency_ignores_groups() -> None:
    data = {"en": ENGLISH[:3000], "de": GERMAN}
    grouped = train(data, 356, pattern="gpt2")
    plain = train([ENGLISH[:3000], GERMAN], 356, pattern="gpt2")
    assert grouped.merges == plain.merges
    assert grouped.options == {**plain.options, "groups": ["en", "de"]}


def test_groups_of_files_and_lists(tmp_path: Path) -> None:
    (tmp_path / "en.txt").write_text(ENGLISH[:2000], encoding="utf-8")
    (tmp_path / "de1.txt").write_text(GERMAN[:300], encoding="utf-8")
    data: dict[str, Any] = {"en": tmp_path / "en.txt", "de": [tmp_path / "de1.txt", GERMAN[300:]]}
    from_files = train(data, 300, pattern="gpt2", score="group_frequency")
    from_text = train(
        {"en": ENGLISH[:2000], "de": [GERMAN[:300], GERMAN[300:]]},
        300,
        pattern="gpt2",
        score="group_frequency",
    )
    assert from_files == from_text


def test_a_per_group_score_refuses_one_group() -> None:
    with pytest.raises(ValueError, match=r"all the training data is one group, so it would give"):
        train([ENGLISH, GERMAN], 300, score="group_frequency")
    with pytest.raises(ValueError, match=r"the training data has 1 group \('en'\)"):
        train({"en": ENGLISH}, 300, score=GroupFrequency())
    with pytest.raises(ValueError, match="has 0 groups"):
        train({}, 300, score="group_frequency")

    class MyGroups(Score):
        name = "my_groups"
        declaration = Declaration(Dependency.GLOBAL, groups=True)

        def score(self, count: int, left: int, right: int, stats: Stats) -> int:
            return count

    with pytest.raises(ValueError, match="score 'my_groups' compares groups"):
        train("some text", 300, score=MyGroups())


def test_a_per_group_score_warns_when_groups_hold_no_text() -> None:
    with pytest.warns(UserWarning, match=r"only 1 of the 2 groups hold any text \('en'\)"):
        tok = train({"en": ENGLISH[:2000], "de": ""}, 300, score="group_frequency")
    assert tok.merges == train(ENGLISH[:2000], 300).merges


def test_bad_groups_are_named() -> None:
    with pytest.raises(TypeError, match="group names must be str"):
        train({1: "text", 2: "more"}, 300)
    with pytest.raises(TypeError, match="group 'de': training data must be str or paths, not"):
        train({"en": "text", "de": b"bytes"}, 300)
    with pytest.raises(TypeError, match=r"group 'de': training data must be a str, a path"):
        train({"en": "text", "de": 5}, 300)
    with pytest.raises(InvalidTextError, match=r"group 'de': item 1 of the training data") as info:
        train({"en": "fine", "de": ["ok", "bad \ud800"]}, 300)
    assert (info.value.source, info.value.offset) == (1, 4)


def test_invalid_utf8_in_a_group_file_names_the_group(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc \xff def")
    with pytest.raises(InvalidTextError, match=r"group 'x': .*bad.txt: invalid UTF-8 at byte"):
        train({"ok": "text", "x": bad}, 300)


def test_groups_are_saved_with_the_model(tmp_path: Path) -> None:
    tok = train({"en": ENGLISH[:2000], "de": GERMAN}, 300, score="group_frequency")
    tok.save(tmp_path / "m.json")
    back = Tokenizer.load(tmp_path / "m.json")
    assert back == tok
    assert back.options["groups"] == ["en", "de"]


def test_workers_do_not_change_grouped_merges() -> None:
    data = {"en": [ENGLISH[:3000], ENGLISH[3000:6000]], "de": GERMAN}
    one = train(data, 320, score="group_frequency")
    two = train(data, 320, score="group_frequency", workers=2)
    assert one == two


def test_tokenizer_train_takes_groups() -> None:
    tok = Tokenizer(pattern="gpt2").train({"a": "the the the the", "b": "der der"}, 258)
    assert tok.options["groups"] == ["a", "b"]


def test_io_refuses_a_mapping() -> None:
    with pytest.raises(TypeError, match=r"a mapping \{group name: data\} is a set of groups"):
        list(iter_units({"en": "text"}))


class RichestGroup(Score):
    """A user's score with views: serve the group holding the most tokens (its pair
    counts there first, then the overall count). The oracle leaves ``stats.view``
    unset, so the score picks its view itself, as any caller may."""

    name = "richest_group"

    @staticmethod
    def view(totals: Any) -> int:
        tokens = totals.group_tokens
        return max(range(len(tokens)), key=lambda g: (tokens[g], -g))

    declaration = Declaration(
        Dependency.GLOBAL,
        groups=True,
        priority="int",
        count_fall_raises=False,
        unigram_fall_raises=False,
        totals=Views(view),
    )

    def score(self, count: int, left: int, right: int, stats: Stats) -> int:
        g = stats.view if stats.view is not None else self.view(stats.totals())
        return (stats.group_count(left, right, g) << 32) + count


@pytest.mark.parametrize(
    ("representation", "counting"),
    [("type", "overlapping"), ("type", "non_overlapping"), ("sequence", "overlapping")],
)
@settings(max_examples=profile_examples(local=30))
@given(grouped_texts("ab cd", 16, 4))
def test_a_users_score_with_views_equals_the_oracle(
    representation: str, counting: Counting, texts: list[list[str]]
) -> None:
    # (with non-overlapping counts an old pair can rise in one group and fall in
    # another by as much: its total stays, and every view must still see the rise)
    groups = {f"g{i}": t for i, t in enumerate(texts)}
    want = oracle_pairs(groups, 15, RichestGroup(), counting=counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # groups may be empty, runs may stop early
        got = train(
            groups,
            256 + 15,
            pattern="gpt2",
            score=RichestGroup(),
            representation=representation,
            counting=counting,
        )
    assert got.merges == want


def test_views_switch_between_structures_and_each_stays_exact() -> None:
    """Four groups of one mix: the worst-compressed group changes often, so the run
    selects from every group's structure, many times each; through a user multiset too."""
    from bpeds.structures import Heapy

    data = {f"g{i}": SWIFT[i * 1500 : (i + 1) * 1500] for i in range(4)}
    want = oracle_pairs({k: [v] for k, v in data.items()}, 60, GroupFrequency())
    assert train(data, 256 + 60, pattern="gpt2", score="group_frequency").merges == want
    with_heapy = train(
        data, 256 + 60, pattern="gpt2", score="group_frequency", multiset=lambda tie: Heapy(tie=tie)
    )
    assert with_heapy.merges == want
    # The worst group did change: a plain frequency run differs.
    assert train(data, 256 + 60, pattern="gpt2").merges != want


def test_a_subclass_keeps_its_parents_views_and_stays_exact() -> None:
    class Doubled(GroupFrequency):  # (a rise of GroupFrequency's is a rise of this one)
        def score(self, count: int, left: int, right: int, stats: Stats) -> Any:
            base = super().score(count, left, right, stats)
            return None if base is None else 2 * base

    assert isinstance(Doubled().declaration.totals, Views)
    data = {"a": SWIFT[:1200], "b": SWIFT[1200:2400]}
    want = oracle_pairs({k: [v] for k, v in data.items()}, 30, Doubled())
    assert train(data, 256 + 30, pattern="gpt2", score=Doubled()).merges == want
