"""``bpeds.compare`` (:mod:`bpeds.comparison`): metrics against hand-computed cases and
tokenization-scorer, shared counting against ``bpeds.train``, curves, groups, pairwise
measures, bad input, files."""

from __future__ import annotations

import contextlib
import csv
import io
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds.comparison.metrics
import bpeds.comparison.runs as runs
from bpeds.comparison import (
    Comparison,
    ConfigError,
    compare,
    jaccard,
    merge_depths,
    renyi_efficiency,
    shannon_efficiency,
    spearman,
)
from bpeds.comparison.configs import Reading
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.training import train
from tests.budget import examples, profile_examples

SWIFT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")
TRAIN = SWIFT[:40000]
HELDOUT = SWIFT[40000:52000]


def scorer(tokens: list[int], metric: str, **kwargs: float) -> float:
    """tokenization-scorer's value for a tokenization (one token id per word), quietly."""
    import tokenization_scorer

    text = " ".join(f"t{t}" for t in tokens)
    with contextlib.redirect_stderr(io.StringIO()):
        return float(tokenization_scorer.score(text, metric=metric, **kwargs))


def ids(tok: Tokenizer, text: str, vocab_size: int | None = None) -> list[int]:
    if vocab_size is not None:
        tok = Tokenizer(tok.merges[: vocab_size - 256], pattern=tok.pattern)
    return tok.encode_ordinary(text)


# -- the metrics ------------------------------------------------------------------------------


@settings(max_examples=examples(ci=60, local=15), deadline=None)
@given(
    counts=st.lists(st.integers(1, 50), min_size=1, max_size=30),
    extra=st.integers(0, 40),
    alpha=st.sampled_from([0.5, 1.0, 2.0, 2.5, 3.0]),
)
def test_efficiencies_equal_tokenization_scorer_on_any_distribution(
    counts: list[int], extra: int, alpha: float
) -> None:
    tokens = [i for i, c in enumerate(counts) for _ in range(c)]
    vocab = max(2, len(counts) + extra)
    shannon = scorer(tokens, "shannon", vocab=vocab)
    assert shannon_efficiency(counts, vocab) == pytest.approx(shannon, rel=1e-9, abs=1e-12)
    # tokenization-scorer's "renyi" with power=1 hands Shannon a used-up generator and
    # returns 0; the order-1 Renyi efficiency is Shannon's, so that is compared instead.
    want = shannon if alpha == 1 else scorer(tokens, "renyi", power=alpha, vocab=vocab)
    assert renyi_efficiency(counts, vocab, alpha) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_compare_efficiencies_equal_tokenization_scorer_on_the_real_encoding() -> None:
    c = compare(
        [{"score": "frequency"}, {"score": "pmi"}],
        train=TRAIN,
        heldout=HELDOUT,
        vocab_size=400,
        sizes=[300, 400],
    )
    for label, tok in c.tokenizers.items():
        assert tok is not None
        for size in (300, 400):
            row = c.row(label, size)
            tokens = ids(tok, HELDOUT, size)
            assert row["renyi_efficiency"] == pytest.approx(
                scorer(tokens, "renyi", power=2.5, vocab=size), rel=1e-9
            )
            assert row["shannon_efficiency"] == pytest.approx(
                scorer(tokens, "shannon", vocab=size), rel=1e-9
            )


def test_efficiency_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one token"):
        renyi_efficiency([0, 0], 4)
    with pytest.raises(ValueError, match="vocab_size must be >= 2"):
        shannon_efficiency([1], 1)
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        renyi_efficiency([1], 4, alpha=-1)


@settings(max_examples=profile_examples(local=30))
@given(st.lists(st.integers(0, 12), unique=True), st.lists(st.integers(0, 12), unique=True))
def test_spearman_is_the_pearson_correlation_of_the_shared_ranks(
    a: list[int], b: list[int]
) -> None:
    n, rho = spearman(a, b)
    shared = [x for x in a if x in b]
    assert n == len(shared)
    if n < 2:
        assert rho is None
        return
    ra = list(range(n))
    order_b = sorted(shared, key=b.index)
    rb = [order_b.index(x) for x in shared]
    mean = (n - 1) / 2
    cov = sum((x - mean) * (y - mean) for x, y in zip(ra, rb, strict=True))
    var = sum((x - mean) ** 2 for x in ra)
    assert rho == pytest.approx(cov / var)


def test_jaccard_and_merge_depths_by_hand() -> None:
    assert jaccard({1, 2}, {2, 3, 4}) == 0.25
    assert jaccard([], []) == 1.0
    # ab, abc = ab+c, abab = ab+ab, ababc = abab+c, cd
    merges = [(97, 98), (256, 99), (256, 256), (258, 99), (99, 100)]
    assert merge_depths(merges) == [1, 2, 2, 3, 1]


# -- metrics of a whole comparison, by hand --------------------------------------------------


def test_compression_and_word_counts_by_hand() -> None:
    tok = Tokenizer([(97, 98)], pattern="gpt2", special_tokens={"<s>": 257})
    # gpt2 pieces: "ab", " ab", " c", "é", "ab" (the special text is cut out; "é<s>ab" is
    # one whitespace-separated word) -> [256], [32, 256], [32, 99], [195, 169], [256]
    text = "ab ab cé<s>ab"
    c = compare([tok], train="ab ab", heldout=text, sizes=1)
    row = c.row("tokenizer 1")
    assert row["vocab_size"] == 258
    assert row["merges"] == 1
    assert row["bytes_per_token"] == pytest.approx(11 / 8)  # 2+3+2+2+2 bytes
    assert row["chars_per_token"] == pytest.approx(10 / 8)
    assert row["tokens_per_word"] == pytest.approx(8 / 3)
    assert row["unused_merges"] == 0.0
    assert row["mean_token_bytes"] == 2
    assert row["max_token_bytes"] == 2
    assert row["mean_merge_depth"] == 1
    assert row["renyi_efficiency"] == pytest.approx(
        renyi_efficiency([3, 2, 1, 1, 1], 257, 2.5)  # 256 x3, 32 x2, 99, 195, 169
    )


def test_undertrained_counts_merged_tokens_the_training_data_rarely_produces() -> None:
    # Merges: ab (3 pairs), then abc (3). Encoding the training data makes abc three times
    # and never ab, the intermediate.
    data = "abc abc abc"
    for below, want in ((1, 1), (3, 1), (4, 2)):
        c = compare(
            [{"pattern": "gpt2", "vocab_size": 258}],
            train=data,
            heldout="abc",
            undertrained_below=below,
        )
        tok = c.tokenizers["pattern=gpt2,vocab_size=258"]
        assert tok is not None
        assert [tok.token_bytes(i) for i in (256, 257)] == [b"ab", b"abc"]
        assert c.row("pattern=gpt2,vocab_size=258")["undertrained"] == want


def test_unused_merges_share() -> None:
    tok = Tokenizer([(97, 98), (120, 121), (256, 99)], pattern="gpt2")  # ab, xy, abc
    c = compare([tok], train="x", heldout="ab ab xy", sizes=1)
    assert c.row("tokenizer 1")["unused_merges"] == pytest.approx(1 / 3)  # abc never


# -- curves -----------------------------------------------------------------------------------


def test_every_size_is_the_tokenizer_with_the_first_merges() -> None:
    c = compare({"f": {"score": "frequency"}}, train=TRAIN, heldout=HELDOUT, vocab_size=512)
    tok = c.tokenizers["f"]
    assert tok is not None
    rows = [r for r in c.rows if r["config"] == "f"]
    assert [r["vocab_size"] for r in rows] == [258, 260, 264, 272, 288, 320, 384, 512]
    nbytes = len(HELDOUT.encode("utf-8"))
    for r in rows:
        n = len(ids(tok, HELDOUT, r["vocab_size"]))
        assert r["bytes_per_token"] == pytest.approx(nbytes / n)
        assert r["tokens_per_word"] == pytest.approx(n / len(HELDOUT.split()))
    per_token = [r["bytes_per_token"] for r in rows]
    assert per_token == sorted(per_token)  # more merges, more compression (on this text)
    assert [r["train_cpu_s"] is not None for r in rows] == [False] * 7 + [True]


def test_a_variant_tokenizer_is_measured_at_its_full_size_only() -> None:
    tok = Tokenizer([(97, 98), (256, 99)], pattern="gpt2", options={"variant": "picky"})
    c = compare([tok], train="abc", heldout="abc ab", sizes=4)
    assert [r["vocab_size"] for r in c.rows] == [258]


# -- shared counting --------------------------------------------------------------------------

CONFIGS: list[dict[str, Any]] = [
    {},
    {"score": {"name": "pmi", "min_count": 2}},
    {"tie": "leftmost"},
    {"representation": "sequence", "tie": "leftmost"},
    {"preset": "minbpe-regex"},
    {"pattern": "gpt2", "special_tokens": ["<|endoftext|>"]},
    {"special_tokens": {"<|endoftext|>": 1000}},
    {"max_token_length": 3, "min_frequency": 3},
    {"counting": "non_overlapping"},
    {"pattern": None, "score": "length_weighted"},
    {"block_size": 4096},  # not shared: trained by bpeds.train on the data itself
]


def test_shared_counts_give_exactly_what_train_gives() -> None:
    data = TRAIN[:15000] + "<|endoftext|>" + TRAIN[15000:20000]
    configs = {str(i): {**cfg, "vocab_size": 330} for i, cfg in enumerate(CONFIGS)}
    c = compare(configs, train=data, heldout=HELDOUT[:2000], sizes=1)
    assert c.errors == {}
    for label, cfg in configs.items():
        kwargs = dict(cfg)
        assert c.tokenizers[label] == train(data, kwargs.pop("vocab_size"), **kwargs), label


def test_groups_are_shared_too() -> None:
    data = {"en": TRAIN[:8000], "num": " ".join(str(k * k % 997) for k in range(400))}
    cfg = {"score": "group_frequency", "vocab_size": 320}
    c = compare([cfg, {"vocab_size": 320}], train=data, heldout="1 2 3 the")
    assert c.tokenizers["score=group_frequency,vocab_size=320"] == train(
        data, 320, score="group_frequency"
    )
    assert c.tokenizers["vocab_size=320"] == train(data, 320)


def test_the_training_data_is_counted_once_per_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Reading] = []
    real = runs.count_training

    def counting(
        data: object, reading: Reading, errors: Any, workers: int, bar: bool = False
    ) -> runs.Counted:
        calls.append(reading)
        return real(data, reading, errors, workers, bar)

    monkeypatch.setattr(runs, "count_training", counting)
    compare(
        [{"score": "frequency"}, {"score": "pmi"}, {"tie": "leftmost"}, {"pattern": "gpt2"}],
        train=TRAIN[:5000],
        heldout=HELDOUT[:1000],
        vocab_size=280,
        sizes=1,
    )
    assert len(calls) == 2 == len(set(calls))  # gpt4 (three configurations) and gpt2


# -- groups and pairwise measures -------------------------------------------------------------


def test_per_group_tokens_per_byte_and_premium() -> None:
    tok = train(TRAIN, 350)
    groups = {"en": HELDOUT[:3000], "digits": "12345 67890 " * 50, "de": "Grüße aus Köln. " * 40}
    c = compare({"t": tok}, train="x", heldout=groups, sizes=1, reference="de")
    row = c.row("t")
    n = {g: len(tok.encode_ordinary(t)) for g, t in groups.items()}
    for g, t in groups.items():
        assert row[f"tokens_per_byte[{g}]"] == pytest.approx(n[g] / len(t.encode("utf-8")))
        assert row[f"premium[{g}]"] == pytest.approx(n[g] / n["de"])
    assert row["bytes_per_token"] == pytest.approx(
        sum(len(t.encode("utf-8")) for t in groups.values()) / sum(n.values())
    )
    assert c.groups == ["en", "digits", "de"]
    assert c.reference == "de"
    default = compare({"t": tok}, train="x", heldout=groups, sizes=1)
    assert default.reference == "en"
    assert default.row("t")["premium[en]"] == 1.0


def test_overlap_and_rank_agreement() -> None:
    a = Tokenizer([(97, 98), (99, 100), (256, 257)], pattern="gpt2")  # ab, cd, abcd
    b = Tokenizer([(99, 100), (97, 98), (120, 121)], pattern="gpt2")  # cd, ab, xy
    c = compare({"a": a, "b": b, "a2": a}, train="abcd", heldout="abcd xy", sizes=1)
    assert c.overlap["a"]["b"] == c.overlap["b"]["a"] == pytest.approx(2 / 4)
    assert c.overlap["a"]["a2"] == 1.0
    assert c.agreement["a"]["b"] == (2, -1.0)  # (a,b) and (c,d) in opposite orders
    assert c.agreement["a"]["a2"] == (3, 1.0)
    assert c.token_lengths["a"] == Counter({2: 2, 4: 1})


# -- bad input --------------------------------------------------------------------------------


def test_bad_configurations_are_all_reported_before_anything_is_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fail(*args: object) -> None:
        raise AssertionError("counted before the configurations were checked")

    monkeypatch.setattr(runs, "count_training", fail)
    bad: dict[str, dict[str, Any]] = {
        "typo": {"score": "pmmi"},
        "tie": {"tie": "random"},
        "fine": {"score": "pmi"},
        "kw": {"varient": "picky"},
        "own": {"workers": 4},
        "groups": {"score": "group_frequency"},
    }
    with pytest.raises(ConfigError) as info:
        compare(bad, train=TRAIN, heldout=HELDOUT, vocab_size=300)
    assert sorted(info.value.problems) == ["groups", "kw", "own", "tie", "typo"]
    msg = str(info.value)
    assert "5 configurations cannot run" in msg
    assert "did you mean 'pmi'" in msg
    assert "varient" in msg
    assert "group" in msg
    assert isinstance(info.value, ValueError)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="no vocab_size"):
        compare([{}], train="a", heldout="a")
    with pytest.raises(ValueError, match="labelled 'x'"):
        compare([{"label": "x"}, {"label": "x"}], train="a", heldout="a", vocab_size=260)
    with pytest.raises(ValueError, match="labelled 'score=pmi'"):
        compare([{"score": "pmi"}, {"score": "pmi"}], train="a", heldout="a", vocab_size=260)
    with pytest.raises(TypeError, match="configuration 1 is a str"):
        compare(["pmi"], train="a", heldout="a", vocab_size=260)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of configurations"):
        compare("pmi", train="a", heldout="a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one configuration"):
        compare([], train="a", heldout="a")
    with pytest.raises(TypeError, match="heldout="):
        compare([{}], train="a", vocab_size=260)
    with pytest.raises(ValueError, match="reference group 'fr'"):
        compare([{}], train="a", heldout={"en": "a"}, vocab_size=260, reference="fr")
    with pytest.raises(ValueError, match="vocabulary sizes above 256"):
        compare([{}], train="a", heldout="a", vocab_size=260, sizes=[100])
    with pytest.raises(ValueError, match="undertrained_below"):
        compare([{}], train="a", heldout="a", vocab_size=260, undertrained_below=0)
    with pytest.raises(ValueError, match="alpha"):
        compare([{}], train="a", heldout="a", vocab_size=260, alpha=-2)
    with pytest.raises(ValueError, match="workers"):
        compare([{}], train="a", heldout="a", vocab_size=260, workers=0)


def test_a_configuration_that_fails_halfway_is_reported_and_the_others_finish(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def sometimes(data: object, vocab_size: int, **kwargs: Any) -> Tokenizer:
        if kwargs.get("min_frequency") == 7:
            raise MemoryError("out of memory at merge 12")
        return train(data, vocab_size, **kwargs)

    monkeypatch.setattr(runs, "train", sometimes)
    c = compare(
        {"ok": {}, "boom": {"min_frequency": 7}, "also": {"score": "pmi"}},
        train=TRAIN[:5000],
        heldout=HELDOUT[:1000],
        vocab_size=280,
        sizes=1,
    )
    assert c.errors == {"boom": "MemoryError: out of memory at merge 12"}
    assert c.tokenizers["boom"] is None
    assert [r["config"] for r in c.rows] == ["ok", "also"]
    table = list(csv.DictReader(io.StringIO(c.to_csv())))
    assert [(r["config"], r["error"]) for r in table] == [
        ("ok", ""),
        ("also", ""),
        ("boom", "MemoryError: out of memory at merge 12"),
    ]
    assert "`boom`: MemoryError" in c.to_markdown()
    assert "boom" not in c.overlap


# -- processes --------------------------------------------------------------------------------


def test_processes_give_the_same_rows_and_measure_cost() -> None:
    configs = {"f": {"score": "frequency"}, "p": {"score": "pmi"}, "l": {"tie": "leftmost"}}
    kw: dict[str, Any] = {"train": TRAIN[:8000], "heldout": HELDOUT[:2000], "vocab_size": 300}
    here = compare(configs, **kw, sizes=2)
    there = compare(configs, **kw, sizes=2, workers=2)
    cost = ("train_cpu_s", "peak_rss_mb")

    def strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in cost} for r in rows]

    assert strip(here.rows) == strip(there.rows)
    assert here.tokenizers == there.tokenizers
    for label in configs:
        assert there.row(label)["train_cpu_s"] > 0
        assert there.row(label)["peak_rss_mb"] >= 0
        assert here.row(label)["peak_rss_mb"] is None


# -- output -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> Comparison:
    return compare(
        {"freq": {}, "pmi": {"score": "pmi"}},
        train=TRAIN[:8000],
        heldout={"a": HELDOUT[:1500], "b": HELDOUT[1500:3000]},
        vocab_size=300,
        sizes=3,
    )


def test_csv_round_trips_every_row(small: Comparison, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    text = small.to_csv(path)
    assert path.read_text(encoding="utf-8") == text
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(small.rows) == 6
    assert list(table[0]) == small.columns
    for got, row in zip(table, small.rows, strict=True):
        assert got["config"] == row["config"]
        assert float(got["bytes_per_token"]) == row["bytes_per_token"]
        assert float(got["premium[b]"]) == row["premium[b]"]
    with pytest.raises(FileExistsError, match="overwrite=True"):
        small.to_csv(path)
    small.to_csv(path, overwrite=True)


def test_markdown_tables(small: Comparison) -> None:
    md = small.to_markdown()
    assert md.splitlines()[0].startswith("| config | vocab_size | bytes_per_token |")
    assert "| freq | 300 |" in md
    assert "| pmi | 300 |" in md
    assert "| freq | 258 |" not in md
    assert "premium[b]" in md
    assert "Jaccard" in md
    assert "Spearman" in md
    every = small.to_markdown(all_sizes=True)
    assert "| freq | 278 |" in every
    assert small._repr_markdown_() == md
    assert "freq" in repr(small)


def test_report_writes_everything_atomically_and_never_overwrites(
    small: Comparison, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bpeds.comparison.plots.DPI", 30)  # (faster; the real DPI: below)
    out = tmp_path / "out"
    written = small.report(out)
    names = sorted(p.name for p in written)
    figures = ["compression", "renyi", "token_lengths", "premium", "overlap"]
    assert names == sorted(
        ["report.md", "results.csv", *(f"{f}.{ext}" for f in figures for ext in ("svg", "png"))]
    )
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        if p.suffix == ".svg":
            assert b"<svg" in p.read_bytes()[:1000]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "![Rényi efficiency against vocabulary size](renyi.png)" in report
    assert "[renyi.svg](renyi.svg)" in report
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (out / "results.csv").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError):
        small.report(out)
    assert (out / "results.csv").read_text(encoding="utf-8") == "mine"
    assert {p.name for p in out.iterdir()} == set(before)  # no temporary file left
    small.report(out, overwrite=True, plots=False)
    assert (out / "results.csv").read_text(encoding="utf-8") == before["results.csv"].decode()
    assert names == sorted(["report.md", "results.csv", *small.figure_names()])


def test_plots_without_matplotlib_say_what_to_install(
    small: Comparison, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"bpeds\[compare\]"):
        small.plot(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert small.report(tmp_path / "r", plots=False)  # tables need nothing


def test_sizes_by_halving() -> None:
    assert bpeds.comparison.metrics.sizes_for(32512, 8, 0) == [
        256,
        768,
        1792,
        3840,
        7936,
        16128,
        32512,
    ]
    # round vocabulary sizes with special tokens counted in them
    assert bpeds.comparison.metrics.sizes_for(32510, 3, 2) == [8192 - 258, 16384 - 258, 32510]
    assert bpeds.comparison.metrics.sizes_for(5, 8, 0) == [
        1,
        2,
        5,
    ]  # 5/2 and 5/4 round (half to even) to 2 and 1
    assert bpeds.comparison.metrics.sizes_for(0, 8, 0) == [0]
    assert bpeds.comparison.metrics.sizes_for(44, 1, 0) == [44]
    assert bpeds.comparison.metrics.sizes_for(100, [300, 357, 400], 1) == [43, 100]
    assert math.isclose(renyi_efficiency([5], 10), 0.0)


def test_empty_heldout_text_and_a_tokenizer_without_merges() -> None:
    with pytest.warns(UserWarning, match="no merges|stopped after 0"):
        tok = train("", 300)
    c = compare({"none": tok, "some": {"vocab_size": 260}}, train="aaaa bbbb", heldout="")
    for label in ("none", "some"):
        row = c.row(label)
        assert row["bytes_per_token"] is None
        assert row["renyi_efficiency"] is None
        assert row["tokens_per_word"] is None
    assert c.row("none")["merges"] == 0
    assert c.row("none")["mean_token_bytes"] is None
    assert c.row("none")["unused_merges"] is None
    only_spaces = compare({"some": {"vocab_size": 260}}, train="aaaa bbbb", heldout="   ")
    assert only_spaces.row("some")["tokens_per_word"] is None  # no word
    assert only_spaces.row("some")["bytes_per_token"] == 1.0  # no merge of spaces: 3 bytes


def test_data_given_as_generators_is_read_once_and_shared() -> None:
    parts = [TRAIN[:3000], TRAIN[3000:6000]]
    c = compare(
        [{"pattern": "gpt2"}, {"pattern": "gpt4"}, {"block_size": 512}],
        train=(p for p in parts),
        heldout={"x": (p for p in [HELDOUT[:500], HELDOUT[500:900]])},
        vocab_size=280,
        sizes=1,
    )
    assert c.tokenizers["pattern=gpt2"] == train(parts, 280, pattern="gpt2")
    assert c.tokenizers["block_size=512"] == train(parts, 280)
    tok = c.tokenizers["pattern=gpt4"]
    assert tok is not None
    n = sum(len(tok.encode_ordinary(t)) for t in [HELDOUT[:500], HELDOUT[500:900]])
    assert c.row("pattern=gpt4")["bytes_per_token"] == pytest.approx(
        len(HELDOUT[:900].encode("utf-8")) / n
    )


def test_an_empty_heldout_group_has_no_per_group_values() -> None:
    tok = Tokenizer([(104, 105)], pattern="gpt2")
    c = compare({"t": tok}, train="x", heldout={"en": "hi hi", "ko": ""}, sizes=1)
    row = c.row("t")
    assert row["premium[en]"] == 1.0
    assert row["tokens_per_byte[en]"] == pytest.approx(3 / 5)  # hi, " ", hi
    assert row["tokens_per_byte[ko]"] is None
    assert row["premium[ko]"] is None


def test_a_progress_bar_per_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    compare(
        {"first": {}, "second": {"score": "pmi"}},
        train=TRAIN[:3000],
        heldout="x",
        vocab_size=270,
        sizes=1,
        progress=True,
    )
    err = capsys.readouterr().err
    assert "shared counting: reading" in err  # the counting the configurations share
    assert "first" in err
    assert "second" in err
    assert "14/14" in err  # each bar counts its merges


def test_a_loop_variant_counts_in_processes_inside_its_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A configuration that reads its data itself (a loop variant) counts it in processes
    of its own when the data is large, from inside the process it trains in."""
    from bpeds.tokenizer import pieces

    monkeypatch.setattr(pieces, "BATCH_CHARS", 2000)  # several batches: counting in processes
    monkeypatch.setattr(pieces, "available_cores", lambda: 2)
    from bpeds.comparison import runs

    monkeypatch.setattr(runs, "available_cores", lambda: 4)
    configs = {"f": {}, "picky": {"variant": "picky"}, "superbpe": {"variant": "superbpe"}}
    units = [TRAIN[i : i + 1500] for i in range(0, 12000, 1500)]
    kw: dict[str, Any] = {"train": units, "heldout": HELDOUT[:2000], "vocab_size": 300}
    there = compare(configs, **kw, sizes=1, workers=2, processes=True)
    assert there.errors == {}
    here = compare(configs, **kw, sizes=1, processes=False)
    assert here.tokenizers == there.tokenizers


def _aligned_share(tok: Tokenizer, text: str) -> float:
    """Over every run of two or more ASCII digits, whether each token boundary inside it
    has a multiple of three digits to its right, from the encoding of the whole text."""
    import re

    cuts, pos = set(), 0
    for t in tok.encode(text):
        pos += len(tok.token_bytes(t))
        cuts.add(pos)
    runs = [m.span() for m in re.finditer(rb"[0-9]{2,}", text.encode())]
    ok = sum(all((hi - p) % 3 == 0 for p in cuts if lo < p < hi) for lo, hi in runs)
    return ok / len(runs)


def test_every_metric_is_over_the_tokens_a_variant_with_removals_can_emit() -> None:
    """Picky removes tokens: each metric, recomputed here by brute force (encoding the
    held-out text whole, over the ids the tokenizer can emit), equals the row's."""
    import bpeds
    from bpeds.comparison.metrics import METRICS, splits_character

    text, held = TRAIN[:20000], HELDOUT[:6000]
    tok = train(text, 420, variant={"name": "picky", "threshold": 0.5}, workers=1)
    emitted = [t for t in tok.token_ids() if t >= 256]
    gone = set(range(256, 256 + tok.num_merges)) - set(emitted)
    assert len(gone) >= 5, "the run must remove tokens for this test to mean anything"
    c = compare({"picky": tok}, train=text, heldout=held, sizes=1)
    row = c.row("picky")
    ids_ = tok.encode_ordinary(held)
    assert not gone & set(ids_)
    made = Counter(tok.encode_ordinary(text))
    counts = Counter(ids_)
    use = bpeds.token_use(tok, held, workers=1)
    depth = dict(enumerate(merge_depths(tok.merges), 256))
    lengths = [len(tok.token_bytes(t)) for t in emitted]
    expect = {
        "bytes_per_token": len(held.encode()) / len(ids_),
        "chars_per_token": len(held) / len(ids_),
        "tokens_per_word": len(ids_) / len(held.split()),
        "renyi_efficiency": renyi_efficiency(counts.values(), tok.vocab_size, 2.5),
        "shannon_efficiency": shannon_efficiency(counts.values(), tok.vocab_size),
        "unused_merges": sum(1 for t in emitted if not counts[t]) / len(emitted),
        "undertrained": sum(1 for t in emitted if not made[t]),
        "mean_token_bytes": sum(lengths) / len(lengths),
        "max_token_bytes": max(lengths),
        "mean_merge_depth": sum(depth[t] for t in emitted) / len(emitted),
        "char_split_share": sum(
            n for t, n in counts.items() if splits_character(tok.token_bytes(t))
        )
        / len(ids_),
        "digit_alignment": _aligned_share(tok, held),
        "residue_share": sum(1 for t in emitted if (r := use.ratio(t)) is not None and r < 0.05)
        / len(emitted),
        "token_gini": None,  # (one held-out group)
    }
    assert set(expect) == set(METRICS) - {"train_cpu_s", "peak_rss_mb"}
    for name, value in expect.items():
        assert row[name] == (None if value is None else pytest.approx(value, rel=1e-12)), name
    assert row["vocab_size"] == tok.vocab_size == 256 + len(emitted)
    assert c.token_lengths["picky"] == Counter(lengths)


def test_figures_are_print_ready_and_the_same_bytes_every_time(
    small: Comparison, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300-dpi PNGs, SVGs without a date (two drawings give the same bytes), and a
    marker and line style of its own for each configuration."""
    import struct

    from matplotlib.axes import Axes

    from bpeds.comparison.plots import figures

    first = figures(small)
    png = first["compression.png"]
    at = png.index(b"pHYs")
    per_metre = struct.unpack(">I", png[at + 4 : at + 8])[0]
    assert round(per_metre * 0.0254) == 300
    assert struct.unpack(">I", png[16:20])[0] >= 7 * 300 - 10  # 7 inches wide at 300 dpi

    styles: list[tuple[object, object]] = []
    real = Axes.plot

    def plot(self: Axes, *args: Any, **kwargs: Any) -> Any:
        styles.append((kwargs.get("marker"), kwargs.get("linestyle")))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "plot", plot)
    monkeypatch.setattr("bpeds.comparison.plots.DPI", 30)  # (the SVG does not depend on it)
    second = figures(small)
    assert first["renyi.svg"] == second["renyi.svg"]
    per_figure = len(small.labels)
    for at in range(0, len(styles), per_figure):
        drawn = styles[at : at + per_figure]
        assert len({m for m, _ in drawn}) == per_figure
        assert len({ls for _, ls in drawn}) == per_figure


def test_the_report_records_its_provenance(tmp_path: Path) -> None:
    """The data files with their SHA-256, in-memory text summed up, bpeds's version, the
    date, the machine, and each configuration's arguments."""
    import hashlib

    train_file = tmp_path / "train.txt"
    train_file.write_text(TRAIN[:6000], encoding="utf-8")
    c = compare(
        {"f": {"score": "frequency"}},
        train=[train_file],
        heldout=HELDOUT[:1000],
        vocab_size=280,
        sizes=1,
    )
    c.report(tmp_path / "out", plots=False)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    digest = hashlib.sha256(train_file.read_bytes()).hexdigest()
    size = train_file.stat().st_size
    assert f"`{train_file}`, {size:,} bytes, SHA-256 `{digest}`" in md
    held = hashlib.sha256(HELDOUT[:1000].encode() + b"\0").hexdigest()
    assert f"1 strings in memory, 1,000 characters, SHA-256 `{held}`" in md
    assert "- Date (UTC): 20" in md
    assert "bpeds 0.1.0, Python" in md
    assert "cores available" in md
    assert '- `f`: `{"score": "frequency", "vocab_size": 280}`' in md


def test_a_given_model_is_labelled_by_how_it_was_trained() -> None:
    picky = train(TRAIN[:5000], 280, variant="picky", workers=1)
    plain = Tokenizer(pattern=None)
    c = compare([picky, plain], train=TRAIN[:5000], heldout=HELDOUT[:1000], sizes=1)
    assert c.labels == ["tokenizer 1 (picky, frequency)", "tokenizer 2"]


def test_a_preset_with_unicode_16_tables_counts_with_them() -> None:
    """The rustbpe preset reads the pattern with Unicode 16.0's tables: its shared counts
    are made with them too, so it trains as bpeds.train does, also on text whose split
    differs between the tables (U+0558 is a letter to the regex module only)."""
    import bpeds

    text = "word \u0558's again, \u0558's more\n" * 50 + TRAIN[:6000]
    both = compare(
        {"rustbpe": {"preset": "rustbpe"}, "plain": {}},
        train=[text],
        heldout=HELDOUT[:2000],
        vocab_size=300,
        sizes=1,
        processes=False,
    )
    assert both.errors == {}
    assert both.tokenizers["rustbpe"] == bpeds.train([text], 300, preset="rustbpe", workers=1)
    assert both.tokenizers["plain"] == bpeds.train([text], 300, workers=1)
