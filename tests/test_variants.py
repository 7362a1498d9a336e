"""Loop variants: the driver equals the brute-force oracle event for event, Picky equals the
paper's trainer, and misuse is refused with clear errors."""

from __future__ import annotations

import collections
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.testing.oracle import brute_force_run
from bpeds.variants import Event, Loop, Picky, Scaffold, Variant, get_variant
from tests.budget import examples, matrix

DATA = Path(__file__).parent / "data"


class RemoveLeftEveryThird(Variant):
    """A user-written hook: every third merge, remove its left token (if merged)."""

    name = "every_third"
    removes = True

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        if loop.merges_done % 3 == 0 and pair[0] >= 256 and pair[0] not in loop.removed:
            loop.remove(pair[0])


class MarkRare(Variant):
    """A user-written hook: mark the new token when it occurs fewer than 3 times;
    unmark every marked token on each fifth merge."""

    name = "mark_rare"
    needs_unigrams = True

    def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
        if loop.merges_done % 5 == 0:
            for t in sorted(loop.marked):
                loop.unmark(t)
        elif loop.unigram(new) < 3:
            loop.mark(new)


def _variants() -> list[Any]:
    return [
        Picky(0.3),
        Picky(0.6),
        Picky(0.9),
        Scaffold(),
        Scaffold(min_count=3),
        RemoveLeftEveryThird(),
        MarkRare(),
    ]


VARIANT_IDS = ["picky0.3", "picky0.6", "picky0.9", "scaffold", "scaffold3", "user_rm", "user_mark"]
chunk = st.lists(st.sampled_from(b"abc "), min_size=0, max_size=12).map(bytes)
corpora = st.lists(chunk, min_size=1, max_size=10)


def _driver_run(chunks: list[bytes], n: int, **options: Any) -> tuple[list[Any], list[Event]]:
    counts = collections.Counter(c for c in chunks if c)
    corpus = TypeCorpus([c for c in chunks if c])
    assert corpus.num_types == len(counts)
    driver = MergeDriver(corpus, n, **options)
    records = driver.run()
    return records, driver.events


SCORE_TIES = [
    ("frequency", "lexicographic"),
    ("frequency", "leftmost"),
    ("frequency", "smallest_ids"),
    ("pmi", "smallest_ids"),
    ("length_weighted", "lexicographic"),
    ("npmi", "smallest_ids"),  # (epochs: a removal can move the totals out of one)
]


# CI runs every (score, tie rule) x variant, 35 cases; a local run the 7 of the diagonal, which
# meet every variant and every (score, tie rule) (``matrix`` in tests/budget.py).
@pytest.mark.parametrize(
    ("score_tie", "variant"),
    matrix(
        SCORE_TIES,
        range(len(VARIANT_IDS)),
        ids=[[f"{score}-{tie}" for score, tie in SCORE_TIES], VARIANT_IDS],
    ),
)
@settings(max_examples=examples(ci=20, local=6))
@given(chunks=corpora, n=st.integers(1, 10))
def test_driver_equals_oracle_event_for_event(
    chunks: list[bytes], n: int, variant: int, score_tie: tuple[str, str]
) -> None:
    score, tie = score_tie
    kept = [c for c in chunks if c]
    options: dict[str, Any] = {"score": score, "tie": tie, "max_merges": 3 * n + 2}
    ours = _driver_run(kept, n, variant=_variants()[variant], **options)
    ref = brute_force_run(kept, n, variant=_variants()[variant], **options)
    assert ours[1] == ref[1]
    assert [(r.pair, r.new_id, r.count) for r in ours[0]] == [
        (r.pair, r.new_id, r.count) for r in ref[0]
    ]


@settings(max_examples=examples(ci=30, local=10))
@given(
    items=st.lists(st.tuples(chunk.filter(bool), st.integers(0, 2)), min_size=2, max_size=10),
    n=st.integers(1, 10),
    variant=st.sampled_from([0, 1, 3]),
)
def test_group_views_with_removals_equal_the_oracle(
    items: list[tuple[bytes, int]], n: int, variant: int
) -> None:
    """GroupFrequency keeps one heap per group: a removal re-scores every pair in each."""
    chunks = [c for c, _ in items]
    groups = [g for _, g in items]
    options: dict[str, Any] = {"score": "group_frequency", "max_merges": 3 * n + 2}
    driver = MergeDriver(TypeCorpus(chunks, groups), n, variant=_variants()[variant], **options)
    records = driver.run()
    ref = brute_force_run(chunks, n, groups=groups, variant=_variants()[variant], **options)
    assert driver.events == ref[1]
    assert [(r.pair, r.count) for r in records] == [(r.pair, r.count) for r in ref[0]]


@pytest.mark.parametrize("counting", ["overlapping", "non_overlapping"])
@settings(max_examples=examples(ci=30, local=10))
@given(chunks=corpora, n=st.integers(1, 10), threshold=st.floats(0.05, 1.0))
def test_picky_removes_and_remakes_as_the_oracle_does(
    chunks: list[bytes], n: int, threshold: float, counting: str
) -> None:
    """Both type-mode representations (strings of ids; id lists, which non-overlapping
    counting uses) split and re-make tokens exactly."""
    kept = [c for c in chunks if c]
    options: dict[str, Any] = {
        "tie": "lexicographic",
        "max_merges": 3 * n + 2,
        "counting": counting,
    }
    ours = _driver_run(kept, n, variant=Picky(threshold), **options)
    ref = brute_force_run(kept, n, variant=Picky(threshold), **options)
    assert ours[1] == ref[1]


def _picky_words() -> list[tuple[bytes, int]]:
    text = (DATA / "tinyshakespeare_100k.txt").read_text(encoding="utf-8")
    words: collections.Counter[str] = collections.Counter()
    for line in text.splitlines():
        words.update(line.split())
    return [((" " + w).encode(), n) for w, n in words.items()]


@pytest.mark.parametrize("case", [0, 1], ids=["threshold0.6", "threshold0.9"])
def test_picky_equals_the_papers_trainer(case: int) -> None:
    """Event for event (merges and removals, in order) against the paper's code, whose
    output is stored in tests/data/picky_golden.json (see tests/data/SOURCES.md)."""
    golden = json.loads((DATA / "picky_golden.json").read_text(encoding="utf-8"))
    expected = golden["cases"][case]
    ref = expected["events"]
    merges = sum(e[0] == "merge" for e in ref)
    driver = MergeDriver(
        TypeCorpus.from_counts(_picky_words()),
        10**6,
        variant=Picky(expected["threshold"]),
        tie="lexicographic",
        max_merges=merges,
    )
    driver.run()

    def text(t: int) -> str:
        return driver.vocab.token_bytes(t).decode()

    ours: list[list[Any]] = []
    for e in driver.events:
        if e.kind == "merge":
            ours.append(["merge", text(e.parts[0]), text(e.parts[1]), text(e.token)])
        else:
            ours.append(["remove", text(e.token), [text(p) for p in e.parts]])
    assert sum(e[0] == "remove" for e in ours) > 10  # (the case exercises removals)
    assert ours == ref


def _rendered(driver: MergeDriver) -> list[list[Any]]:
    """The driver's events as the golden files write the reference's (tokens as text)."""

    def text(t: int) -> str:
        return driver.vocab.token_bytes(t).decode()

    return [
        ["merge", text(e.parts[0]), text(e.parts[1]), text(e.token)]
        if e.kind == "merge"
        else ["remove", text(e.token), [text(p) for p in e.parts]]
        for e in driver.events
    ]


@pytest.mark.parametrize("case", [0, 1], ids=["threshold0.7", "threshold0.5"])
def test_picky_count_remakes_stops_where_the_papers_trainer_stops(case: int) -> None:
    """The paper's code counts a merge that re-makes a present token as a new token, so it
    stops one merge earlier per such merge (tests/data/picky_stop_golden.json: runs to
    2,064 tokens, one re-make each). ``count_remakes=True`` gives its events exactly, the
    same number of merges included; the default counts the tokens present and merges on."""
    golden = json.loads((DATA / "picky_stop_golden.json").read_text(encoding="utf-8"))
    expected = golden["cases"][case]
    assert expected["remade_present"]  # (the case exercises the rule)
    target = expected["vocab_size"] - expected["initial_size"]

    def run(count_remakes: bool) -> MergeDriver:
        variant = Picky(expected["threshold"], count_remakes=count_remakes)
        driver = MergeDriver(
            TypeCorpus.from_counts(_picky_words()), target, variant=variant, tie="lexicographic"
        )
        driver.run()
        return driver

    ours = _rendered(run(True))
    rendered = json.dumps(ours, ensure_ascii=False, separators=(",", ":"))
    assert sum(e[0] == "merge" for e in ours) == expected["merges"]
    assert ours[-3:] == expected["last_events"]
    assert hashlib.sha256(rendered.encode()).hexdigest() == expected["events_sha256"]
    by_tokens = _rendered(run(False))
    assert by_tokens[: len(ours)] == ours
    assert sum(e[0] == "merge" for e in by_tokens) > expected["merges"]


def test_vocabulary_target_counts_present_unmarked_tokens() -> None:
    """A run with removals merges more than num_merges times and ends with exactly
    num_merges present tokens past the bytes."""
    driver = MergeDriver(
        TypeCorpus.from_counts(_picky_words()), 200, variant=Picky(0.6), tie="lexicographic"
    )
    driver.run()
    removed = {e.token for e in driver.events if e.kind == "remove"}
    remade = {e.token for e in driver.events if e.kind == "merge"}
    live = {e.token for e in driver.events if e.kind == "merge"}
    for e in driver.events:  # replay: which tokens are present at the end
        if e.kind == "merge":
            live.add(e.token)
        elif e.kind == "remove":
            live.discard(e.token)
    assert removed
    assert remade
    assert len(driver.records) > 200
    assert len(live) == 200


def test_scaffold_marks_and_reactivates() -> None:
    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")[:30000]
    chunks = [(" " + w).encode() for w in text.split()]
    driver = MergeDriver(TypeCorpus(chunks), 150, variant=Scaffold(), tie="smallest_ids")
    driver.run()
    kinds = collections.Counter(e.kind for e in driver.events)
    assert kinds["mark"] > 0
    marked = set()
    for e in driver.events:
        if e.kind == "mark":
            marked.add(e.token)
        elif e.kind == "unmark":
            marked.discard(e.token)
    assert kinds["merge"] == 150 + len(marked)


def test_a_variant_that_removes_needs_type_mode() -> None:
    with pytest.raises(ValueError, match="type mode"):
        MergeDriver(SequenceCorpus([b"abab"]), 2, variant="picky").run()


def test_misuse_is_refused_clearly() -> None:
    class RemoveTooEarly(Variant):
        removes = True

        def before_merge(self, loop: Loop, pair: tuple[int, int], count: int) -> None:
            if loop.merges_done:
                loop.remove(256)

    with pytest.raises(ValueError, match="after_merge only"):
        MergeDriver(TypeCorpus([b"abab", b"abc"]), 3, variant=RemoveTooEarly()).run()

    class Undeclared(Variant):
        def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
            loop.unigram(new)

    with pytest.raises(ValueError, match="needs_unigrams"):
        MergeDriver(TypeCorpus([b"abab"]), 2, variant=Undeclared()).run()

    class RemoveByte(Variant):
        removes = True

        def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
            loop.remove(97)

    with pytest.raises(ValueError, match="it is a byte"):
        MergeDriver(TypeCorpus([b"abab"]), 2, variant=RemoveByte()).run()
    with pytest.raises(ValueError, match="unknown variant 'picy'"):
        get_variant("picy")
    with pytest.raises(ValueError, match=r"threshold must be a number in \(0, 1\]"):
        Picky(1.5)
    with pytest.raises(ValueError, match="does not take options"):
        get_variant({"name": "picky", "tau": 0.5})


def test_max_merges_bounds_a_run_that_never_reaches_its_target() -> None:
    class RemoveEverything(Variant):
        removes = True

        def after_merge(self, loop: Loop, pair: tuple[int, int], new: int, count: int) -> None:
            loop.remove(new)

    driver = MergeDriver(TypeCorpus([b"abab", b"abc"]), 5, variant=RemoveEverything(), max_merges=7)
    assert len(driver.run()) == 7


# -- the tokenizer layer: encode by the event log, save/load, CLI, exports ---------------


def _naive_replay(events: list[list[Any]], piece: bytes, hidden: set[int]) -> list[int]:
    """Every event, in order, applied to the whole piece (the definition)."""
    from bpeds.testing.oracle import apply_merge

    tokens = list(piece)
    parents: dict[int, tuple[int, int]] = {}
    for e in events:
        if e[0] == "merge":
            parents.setdefault(e[1], (e[2], e[3]))
            tokens = apply_merge(tokens, e[2], e[3], e[1])
        elif e[0] == "remove":
            tokens = [p for t in tokens for p in ([*e[2:]] if t == e[1] else [t])]
    out: list[int] = []
    stack: list[int] = []
    for t in tokens:
        stack.append(t)
        while stack:
            x = stack.pop()
            if x in hidden:
                stack += reversed(parents[x])
            else:
                out.append(x)
    return out


@pytest.mark.filterwarnings("ignore:training stopped:UserWarning")  # tiny corpora
@pytest.mark.parametrize("variant", ["picky", "scaffold", {"name": "picky", "threshold": 0.5}])
@settings(max_examples=examples(ci=25, local=8))
@given(chunks=st.lists(st.text(alphabet="ab c", min_size=1, max_size=12), min_size=1, max_size=12))
def test_tokenizer_encodes_by_replaying_its_events(chunks: list[str], variant: Any) -> None:
    import bpeds

    tok = bpeds.train(chunks, 256 + 8, pattern=None, variant=variant, tie="lexicographic")
    # (a log that only merges, each once in id order, is kept as the merges alone)
    events = tok.events or [["merge", 256 + k, a, b] for k, (a, b) in enumerate(tok.merges)]
    hidden: set[int] = set()
    for e in events:
        if e[0] == "mark":
            hidden.add(e[1])
        elif e[0] in ("unmark", "remove"):
            hidden.discard(e[1])
    for text in chunks:
        ids = tok.encode_ordinary(text)
        assert ids == _naive_replay(events, text.encode(), hidden)
        assert tok.decode(ids) == text
        assert not hidden & set(ids)


def test_variant_models_round_trip_and_refuse_formats_that_cannot_hold_them(
    tmp_path: Path,
) -> None:
    import bpeds
    from bpeds.tokenizer.formats import FormatError
    from bpeds.tokenizer.formats.hf import hf_tokenizer_json
    from bpeds.tokenizer.formats.minbpe import minbpe_model_text
    from bpeds.tokenizer.formats.tiktoken_format import tiktoken_ranks

    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
    tok = bpeds.train(text, 700, variant={"name": "picky", "threshold": 0.6})
    assert tok.replays
    assert tok.vocab_size == 700
    removed = {e[1] for e in tok.events or () if e[0] == "remove"}
    assert removed
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    path = tmp_path / "picky.json"
    tok.save(path)
    assert '"version": 2' in path.read_text(encoding="utf-8")
    back = bpeds.Tokenizer.load(path)
    assert back == tok
    assert back.encode(text) == ids
    for export in (hf_tokenizer_json, minbpe_model_text, tiktoken_ranks):
        with pytest.raises(FormatError, match="cannot express"):
            export(tok)
    plain = bpeds.train(text, 700)
    assert not plain.replays
    assert plain.events is None
    assert '"version": 1' in bpeds.tokenizer.persist.dumps(plain)


@pytest.mark.filterwarnings("ignore:training stopped:UserWarning")  # a tiny corpus
def test_a_tampered_event_log_is_refused() -> None:
    import bpeds
    from bpeds.errors import TokenizerError

    tok = bpeds.train(["abab abc"] * 3, 260, pattern=None, variant="picky")
    events = tok.events or []
    bad = [list(e) for e in events] + [["remove", 97, 97]]
    with pytest.raises(TokenizerError, match="cannot remove token 97"):
        bpeds.Tokenizer(tok.merges, pattern=None, events=bad)
    with pytest.raises(TokenizerError, match="unknown kind"):
        bpeds.Tokenizer(tok.merges, pattern=None, events=[["split", 256]])


def test_cli_trains_with_a_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In process (``python -m bpeds`` itself is tested in tests/test_cli.py)."""
    import bpeds
    from bpeds.cli import main

    out = tmp_path / "m.json"

    def train(options: str) -> tuple[int, str]:
        argv = ["train", str(DATA / "taylorswift.txt"), "--vocab-size", "400", "-o", str(out)]
        argv += ["--variant", "picky", "--variant-options", options]
        code = main(argv)
        return code, capsys.readouterr().err

    code, err = train('{"threshold": 0.6}')
    assert code == 0, err
    tok = bpeds.Tokenizer.load(out)
    assert tok.options["variant"] == {"name": "picky", "threshold": 0.6}
    code, err = train('{"tau": 1}')
    assert code == 2
    assert "does not take options" in err


# -- SuperBPE: a switch of pre-tokenization half-way --------------------------------------


@pytest.mark.parametrize("tie", ["smallest_ids", "leftmost"])
@settings(max_examples=examples(ci=15, local=5))
@given(
    lines=st.lists(st.text(alphabet="ab c.1\n", min_size=1, max_size=20), min_size=1, max_size=8),
    stage1=st.integers(0, 6),
    stage2=st.integers(1, 8),
    max_words=st.integers(1, 3),
)
def test_superbpe_second_stage_equals_the_oracle(
    lines: list[str], stage1: int, stage2: int, max_words: int, tie: str
) -> None:
    """Stage 2 is the oracle run on the second pattern's chunks, each starting as the
    stage-1 merges encode it, with pairs over ``max_words`` words refused."""
    import warnings

    import regex

    import bpeds
    from bpeds.tokenizer.encoder import bpe
    from bpeds.tokenizer.superbpe import SUPERBPE_STAGE2
    from bpeds.variants import SuperBPE, count_words
    from bpeds.vocab import Vocab

    variant = SuperBPE(256 + stage1, max_words=max_words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (small inputs run out of pairs)
        tok = bpeds.train(lines, 256 + stage1 + stage2, variant=variant, tie=tie)
        first = bpeds.train(lines, 256 + stage1, tie=tie)
    n1 = tok.options["stage1"]["merges"]
    assert tok.merges[:n1] == first.merges
    vocab = Vocab()
    for a, b in first.merges:
        vocab.add(a, b)
    ranks = first.mergeable_ranks()
    chunks = [
        bpe(c.encode(), ranks) for line in lines for c in regex.findall(SUPERBPE_STAGE2, line)
    ]
    ref, _ = brute_force_run(
        chunks, 256 + stage1 + stage2 - len(vocab), vocab=vocab, tie=tie, variant=variant
    )
    assert tok.merges[n1:] == [r.pair for r in ref]
    for i in range(256 + n1, 256 + tok.num_merges):
        assert count_words(tok.token_bytes(i)) <= max_words
    assert tok.pattern == SUPERBPE_STAGE2


def test_superbpe_tokens_cross_spaces_and_round_trip(tmp_path: Path) -> None:
    import bpeds

    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
    tok = bpeds.train(text, 1500, variant={"name": "superbpe", "transition": 0.8})
    assert not tok.replays  # (encoding is ordinary BPE on the second pattern)
    n1 = tok.options["stage1"]["merges"]
    assert n1 == round((1500 - 256) * 0.8)
    superwords = [tok.token_bytes(i) for i in range(256 + n1, 256 + tok.num_merges)]
    assert sum(len(t.split()) >= 2 for t in superwords) > 50
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert len(ids) < len(bpeds.train(text, 1500).encode(text))
    path = tmp_path / "super.json"
    tok.save(path)
    assert bpeds.Tokenizer.load(path).encode(text) == ids
    tokenizers = pytest.importorskip("tokenizers")
    from bpeds.tokenizer.formats.hf import hf_tokenizer_json

    hf = tokenizers.Tokenizer.from_str(json.dumps(hf_tokenizer_json(tok)))
    sample = text[:20000]
    assert hf.encode(sample).ids == tok.encode(sample)


def test_superbpe_misuse_is_refused() -> None:
    import bpeds
    from bpeds.variants import SuperBPE

    with pytest.raises(ValueError, match="reads the data twice"):
        bpeds.train(iter(["a b"]), 300, variant="superbpe")
    with pytest.raises(ValueError, match="must lie between"):
        bpeds.train("a b", 300, variant=SuperBPE(400))
    with pytest.raises(ValueError, match="transition must be a fraction"):
        SuperBPE(1.5)
    with pytest.raises(ValueError, match="max_words must be an int >= 1"):
        SuperBPE(max_words=0)


def test_compare_measures_a_variant_at_the_size_it_emits() -> None:
    import bpeds

    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
    c = bpeds.compare(
        {"bpe": {}, "picky": {"variant": {"name": "picky", "threshold": 0.6}}},
        train=text[:100_000],
        heldout=text[100_000:],
        vocab_size=600,
    )
    final = {r["config"]: r for r in c.final_rows()}
    assert final["picky"]["vocab_size"] == final["bpe"]["vocab_size"] == 600
    assert final["picky"]["merges"] > final["bpe"]["merges"]  # (removed tokens keep ids)
