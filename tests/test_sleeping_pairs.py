"""SleepingPairs against its model, and the driver's count table checked merge by merge."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import MergeDeltas, SequenceCorpus, TypeCorpus
from bpeds.driver.counts import CountTable
from bpeds.errors import InvariantError
from bpeds.structures import SleepingPairs
from bpeds.testing.sleeping_pairs import pmi_rise, sleeping_pairs_machine
from bpeds.vocab import Vocab, pack_pair
from tests.budget import examples

TestSleepingPairsMachine = sleeping_pairs_machine(SleepingPairs).TestCase
TestSleepingPairsMachine.settings = settings(
    max_examples=examples(ci=200, local=60), stateful_step_count=40, deadline=None
)


def test_a_token_fall_without_a_new_cover_is_caught() -> None:
    uni = [0, 0, 100, 40]
    s = SleepingPairs(uni, pmi_rise)
    s.add([pack_pair(2, 3)])
    s.sleep(2, [pack_pair(2, 3)], [0.5], [7])
    s.check()
    uni[2] = 50  # (the driver would call token_fell(2) here)
    with pytest.raises(InvariantError, match="token fell, and no cover was pushed"):
        s.check()
    s.token_fell(2)
    s.check()
    uni[2] = 20
    with pytest.raises(InvariantError, match="cover is stale"):
        s.check()


def test_a_pair_lost_under_its_other_token_is_caught() -> None:
    s = SleepingPairs([0, 0, 100, 40], pmi_rise)
    s.add([pack_pair(2, 3)])
    s.awake[3].discard(pack_pair(2, 3))
    with pytest.raises(InvariantError, match="lost under token 3"):
        s.check()


chunks = st.lists(st.lists(st.sampled_from(b"abcab "), max_size=10).map(bytes), min_size=1)


@settings(max_examples=examples(ci=100, local=30), deadline=None)
@given(chunks=chunks, groups=st.integers(1, 3), representation=st.sampled_from(["type", "seq"]))
def test_the_count_table_stays_consistent_merge_by_merge(
    chunks: list[bytes], groups: int, representation: str
) -> None:
    labels = [i % groups for i in range(len(chunks))]
    corpus = (
        TypeCorpus(chunks, labels) if representation == "type" else SequenceCorpus(chunks, labels)
    )
    vocab = Vocab()
    run = corpus.start("overlapping", True, vocab.length)
    table = CountTable(run.initial(), 256, unigrams=True, groups=True, totals=True, watch=True)
    table.check()
    deltas = MergeDeltas(len(table.group_tokens), counts=table.pairs)
    for _ in range(8):
        if not table.pairs:
            break
        pair = max(table.pairs, key=lambda k: (table.pairs[k], -k))
        left, right = pair >> 32, pair & 0xFFFFFFFF
        new = vocab.add(left, right)
        deltas.reset()
        run.merge(left, right, new, deltas)
        table.apply_merge(pair, left, right, new, deltas)
        table.check()
        run.check()
