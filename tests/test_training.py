"""Training: streamed input against whole-text splitting, presets against real trainers,
special tokens, workers, progress, errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpeds
import bpeds.tokenizer.pieces
import bpeds.tokenizer.trainer
from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord
from bpeds.tokenizer import Tokenizer, TokenizerError
from bpeds.tokenizer.io import InvalidTextError, iter_segments, iter_units, read_text_blocks
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, GPT4_PATTERN, PATTERNS, split
from bpeds.tokenizer.progress import NullProgress, TqdmProgress, resolve_progress
from bpeds.tokenizer.training import PRESETS, count_pieces, train
from tests.golden import minbpe_golden
from tests.hf_reference import hf_byte_level_trained, hf_merges_as_bytes
from tests.minbpe_rule import minbpe_merges

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")

# Characters that exercise every alternative of the named patterns: letters (upper, lower,
# non-Latin, marks), digits, apostrophes, punctuation, every kind of whitespace, multi-byte
# UTF-8 (so byte blocks cut characters), and the text of the special tokens below.
ALPHABET = "aB zé中\u0301'sdl1234!.,/\n\r\t\u00a0\u2028<|>x😀"
SPECIALS = ["<|x|>", "<|x|>x", "|>"]
_SPECIAL_RX = regex.compile("|".join(regex.escape(t) for t in sorted(SPECIALS, key=len)[::-1]))

text_st = st.text(alphabet=ALPHABET, max_size=80)
hyp = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


def reference_chunks(text: str, pattern: str | None, specials: bool) -> list[bytes]:
    """Split the whole text: around special tokens (leftmost-longest), then each segment."""
    segments = _SPECIAL_RX.split(text) if specials else [text]
    return [c for seg in segments for c in split(seg, pattern)]


def streamed_chunks(data: Any, pattern: str | None, specials: bool, block: int) -> list[bytes]:
    pieces = iter_segments(
        data, pattern=pattern, special_tokens=SPECIALS if specials else (), block_size=block
    )
    return [c for p in pieces for c in split(p, pattern)]


# -- streaming gives exactly the chunks of the whole text ----------------------------------


@hyp
@given(
    text=text_st,
    name=st.sampled_from(["gpt2", "gpt4", "gpt4o", None]),
    block=st.integers(1, 12),
    specials=st.booleans(),
)
def test_file_stream_chunks_equal_whole_file_split(
    tmp_path: Path, text: str, name: str | None, block: int, specials: bool
) -> None:
    path = tmp_path / "unit.txt"
    path.write_bytes(text.encode("utf-8"))
    pattern = None if name is None else PATTERNS[name]
    want = reference_chunks(text, pattern, specials)
    assert streamed_chunks(path, pattern, specials, block) == want
    # A long str is cut the same way (blocks of characters instead of bytes).
    assert streamed_chunks(text, pattern, specials, block) == want


@pytest.mark.parametrize("name", ["gpt2", "gpt4", "gpt4o"])
@pytest.mark.parametrize("block", [1, 2, 3, 4])
def test_a_newline_before_a_slash_is_not_cut(name: str, block: int) -> None:
    """GPT-4o's punctuation run takes newlines and slashes after it: '.\\n/' is one chunk."""
    text = "a.\n/b " * 3
    pattern = PATTERNS[name]
    assert streamed_chunks(text, pattern, False, block) == list(split(text, pattern))


@settings(max_examples=60)
@given(
    run=st.text(alphabet=" \t\n\r\u00a0", min_size=1, max_size=30),
    word=st.sampled_from(["a", "7", "!", "é", "'s"]),
    block=st.integers(1, 6),
)
def test_whitespace_runs_across_blocks(run: str, word: str, block: int) -> None:
    """GPT-2's \\s+(?!\\S) and GPT-4's \\s*[\\r\\n] read whole whitespace runs."""
    text = f"x{word}{run}{word} {run}y{run}"
    for pattern in (GPT2_PATTERN, GPT4_PATTERN, PATTERNS["gpt4o"]):
        assert streamed_chunks(text, pattern, False, block) == list(split(text, pattern))


def test_iterator_items_and_files_are_separate_units(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("hello  ", encoding="utf-8")
    b.write_text("world", encoding="utf-8")
    pieces = list(iter_segments([a, "x  ", b], pattern="gpt2", block_size=2))
    chunks = [c for p in pieces for c in split(p, "gpt2")]
    # "hello  " then "world": the trailing spaces stay in the first unit.
    assert chunks == [b"hello", b"  ", b"x", b"  ", b"world"]


def test_count_pieces_is_the_same_for_any_batching_and_workers() -> None:
    texts = [TEXT[i : i + 997] for i in range(0, 60000, 997)]
    one = count_pieces(texts, GPT4_PATTERN)
    assert isinstance(one, dict)
    assert list(one) == list(
        dict.fromkeys(c for t in texts for c in regex.findall(GPT4_PATTERN, t))
    )
    for batch in (1, 5000):
        got = count_pieces(texts, GPT4_PATTERN, workers=2, batch_chars=batch)
        assert isinstance(got, dict)
        assert list(got.items()) == list(one.items())
    seq = count_pieces(texts, GPT4_PATTERN, sequence=True, workers=2, batch_chars=3000)
    assert seq == [c for t in texts for c in regex.findall(GPT4_PATTERN, t)]


# -- invalid text ------------------------------------------------------------------------


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_invalid_utf8_in_a_file_names_the_byte_offset(tmp_path: Path, block: int) -> None:
    good = "héllo wörld ".encode()
    bad = good + b"\xe2\x82" + b" more" + b"\xff"
    path = tmp_path / "bad.txt"
    path.write_bytes(bad)
    with pytest.raises(
        InvalidTextError, match=rf"bad.txt: invalid UTF-8 at byte offset {len(good)}"
    ) as info:
        list(read_text_blocks(path, block_size=block))
    assert info.value.offset == len(good)
    assert info.value.source == str(path)
    replaced = list(iter_segments(path, pattern=None, errors="replace", block_size=block))
    assert "".join(replaced) == bad.decode("utf-8", "replace")
    with pytest.raises(InvalidTextError, match="byte offset"):
        train(path, 300, block_size=block)


def test_truncated_utf8_at_end_of_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cut.txt"
    path.write_bytes(b"abc\xe4\xb8")
    with pytest.raises(InvalidTextError, match="byte offset 3"):
        list(read_text_blocks(path, block_size=2))


def test_lone_surrogates_in_str_raise_unless_replaced() -> None:
    with pytest.raises(InvalidTextError, match=r"item 1 .* U\+D800 at character offset 2") as info:
        train(["fine", "ab\ud800cd"], 300)
    assert (info.value.source, info.value.offset) == (1, 2)
    with pytest.warns(UserWarning, match="stopped"):
        tok = train(["ab\ud800cd"] * 3, 256 + 20, errors="replace", pattern=None)
    assert tok.token_bytes(256 + len(tok.merges) - 1) == "ab\ufffdcd".encode()
    chunks = list(iter_segments(["a\ud800b"], errors="replace"))
    assert chunks == ["a\ufffdb"]


@pytest.mark.parametrize("errors", ["surrogateescape", "ignore", "backslashreplace", 1])
def test_other_error_policies_are_refused(errors: Any) -> None:
    with pytest.raises(ValueError, match="'strict' or 'replace'"):
        train("abc", 300, errors=errors)


# -- presets equal the real trainers -------------------------------------------------------


def test_preset_minbpe_basic_equals_minbpe() -> None:
    text = TEXT[:12000]
    tok = train(text, 256 + 150, preset="minbpe-basic")
    assert tok.merges == minbpe_golden(text, 150, None)
    assert tok.pattern is None
    assert tok.options["representation"] == "sequence"
    assert tok.options["preset"] == "minbpe-basic"


def test_preset_minbpe_regex_equals_minbpe() -> None:
    text = TEXT[50000:80000]
    tok = train(text, 256 + 150, preset="minbpe-regex")
    assert tok.merges == minbpe_golden(text, 150, GPT4_PATTERN)
    assert tok.pattern == GPT4_PATTERN


def test_preset_hf_equals_huggingface_bpe_trainer() -> None:
    pytest.importorskip("tokenizers")
    merges = 800
    theirs = hf_merges_as_bytes(hf_byte_level_trained([TEXT], 256 + merges))
    tok = train(TEXT, 256 + merges, preset="hf")
    ours = [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in tok.merges]
    assert len(ours) == merges
    assert ours == theirs


def test_preset_rustbpe_equals_rustbpe() -> None:
    rustbpe = pytest.importorskip("rustbpe")
    # Far enough for late merges of low counts, many ties and the fused loop's waiting
    # buckets (pairs born below half the current count) to decide merges.
    merges = 4000
    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter([TEXT]), vocab_size=256 + merges, pattern=GPT4_PATTERN)
    theirs = [t for t, r in sorted(rb.get_mergeable_ranks(), key=lambda x: x[1]) if r >= 256]
    tok = train(TEXT, 256 + merges, preset="rustbpe")
    assert [tok.token_bytes(256 + k) for k in range(merges)] == theirs


def test_presets_fill_defaults_and_refuse_conflicts() -> None:
    assert set(PRESETS) == {"minbpe-basic", "minbpe-regex", "hf", "rustbpe"}
    tok = train("ab ab", 257, preset="hf", tie="hf", pattern="gpt2")  # agreeing is fine
    assert tok.pattern == GPT2_PATTERN
    with pytest.raises(ValueError, match="preset 'hf' sets tie='hf'"):
        train("ab", 257, preset="hf", tie="leftmost")
    with pytest.raises(ValueError, match="preset 'minbpe-basic' sets pattern=None"):
        train("ab", 257, preset="minbpe-basic", pattern="gpt2")
    with pytest.raises(ValueError, match="unknown preset"):
        train("ab", 257, preset="sentencepiece")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"pattern": "gpt4"}, "preset 'hf' sets pattern='gpt2', but pattern='gpt4' was given"),
        ({"tie": "smallest_ids"}, "preset 'hf' sets tie='hf', but tie='smallest_ids' was given"),
        (
            {"representation": "type"},
            "preset 'minbpe-basic' sets representation='sequence', but representation='type'",
        ),
    ],
)
def test_an_explicit_default_that_conflicts_with_the_preset_is_refused(
    given: dict[str, Any], message: str
) -> None:
    """Passing the usual default's value is a choice too: not silently replaced by the preset's."""
    preset = "minbpe-basic" if "representation" in given else "hf"
    with pytest.raises(ValueError, match=re.escape(message)):
        train("ab ab", 257, preset=preset, **given)
    left_out = train("ab ab", 257, preset=preset)  # arguments left out take the preset's
    assert left_out.pattern == (None if preset == "minbpe-basic" else GPT2_PATTERN)
    assert left_out.options["representation"] == PRESETS[preset]["representation"]
    plain = train("ab ab", 257)  # without a preset: gpt4, smallest_ids, type
    assert plain.pattern == PATTERNS["gpt4"]
    assert plain.options["tie"] == {"name": "smallest_ids"}
    assert plain.options["representation"] == "type"
    # Retraining a Tokenizer: its default gpt4 pattern yields to the preset's, others must agree.
    assert Tokenizer().train("ab ab", 257, preset="hf").pattern == GPT2_PATTERN
    with pytest.raises(ValueError, match="preset 'hf' sets pattern"):
        Tokenizer(pattern="gpt4o").train("ab ab", 257, preset="hf")


# -- the data model of training ------------------------------------------------------------


def test_train_equals_the_driver_on_split_text() -> None:
    tok = train(
        TEXT, 256 + 300, pattern="gpt2", tie="leftmost", min_frequency=3, max_token_length=6
    )
    d = MergeDriver(
        TypeCorpus(split(TEXT, "gpt2")), 300, tie="leftmost", min_count=3, max_token_length=6
    )
    assert tok.merges == [r.pair for r in d.run()]
    assert max(len(tok.token_bytes(256 + k)) for k in range(len(tok.merges))) <= 6
    assert tok.options["min_frequency"] == 3
    assert tok.options["max_token_length"] == 6
    assert tok.options["tie"] == {"name": "leftmost"}
    assert tok.options["vocab_size"] == 556


def test_sequence_representation_equals_type_representation() -> None:
    text = TEXT[:30000]
    a = train(text, 256 + 120, tie="leftmost", representation="sequence")
    b = train(text, 256 + 120, tie="leftmost", representation="type")
    assert a.merges == b.merges


@pytest.mark.parametrize("tie", ["leftmost", "smallest_ids"])
def test_workers_do_not_change_the_merges(monkeypatch: pytest.MonkeyPatch, tie: str) -> None:
    monkeypatch.setattr(bpeds.tokenizer.pieces, "BATCH_CHARS", 4000)
    items = [TEXT[i : i + 3000] for i in range(0, len(TEXT), 3000)]
    one = train(items, 256 + 400, tie=tie, workers=1)
    two = train(items, 256 + 400, tie=tie, workers=2)
    assert one.merges == two.merges
    assert len(one.merges) == 400


def test_a_file_trains_like_its_text(tmp_path: Path) -> None:
    path = tmp_path / "ts.txt"
    path.write_bytes((DATA / "taylorswift.txt").read_bytes())
    a = train(path, 256 + 300, tie="leftmost", block_size=1000)
    b = train(TEXT, 256 + 300, tie="leftmost")
    assert a.merges == b.merges


def test_special_tokens_get_ids_after_the_merges_and_are_not_learned() -> None:
    doc = "the cat<|endoftext|>"
    tok = train(
        [doc * 50, "<|endoftext|><|pad|>" * 30],
        256 + 6 + 2,
        special_tokens=["<|endoftext|>", "<|pad|>"],
        pattern=None,
    )
    assert tok.special_tokens == {"<|endoftext|>": 256 + 6, "<|pad|>": 256 + 7}
    assert tok.vocab_size == 256 + 8
    learned = [tok.token_bytes(256 + k) for k in range(len(tok.merges))]
    assert all(b"<|" not in t and b"|>" not in t and b"endof" not in t for t in learned)
    assert max(learned, key=len) == b"the cat"
    ids = tok.encode(doc, allowed_special="all")
    assert ids == [256 + 5, 256 + 6]


def test_special_tokens_as_a_dict_keep_their_ids() -> None:
    tok = train("ab ab ab", 256 + 2 + 1, special_tokens={"<s>": 1000}, pattern="gpt2")
    assert tok.special_tokens == {"<s>": 1000}
    assert tok.vocab_size == 256 + 2 + 1
    with pytest.raises(
        ValueError,
        match=r"has id 257, which belongs to a merge token: ids 0..257 .* use ids >= 258",
    ):
        train("ab ab", 256 + 2 + 1, special_tokens={"<s>": 257})
    with pytest.raises(ValueError, match="share the id"):
        train("ab", 300, special_tokens={"<s>": 400, "</s>": 400})


@pytest.mark.parametrize(
    ("specials", "error", "match"),
    [
        (["<s>", "<s>"], TokenizerError, "given twice"),
        ([""], TokenizerError, "empty string"),
        (["ab", "bc"], TokenizerError, "overlap"),
        ("<s>", TypeError, "not a str"),
        ([b"<s>"], TypeError, "is a str"),
        (["\ud800"], TokenizerError, "surrogate"),
    ],
)
def test_bad_special_tokens_are_refused(specials: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        train("abc", 300, special_tokens=specials)


def test_vocab_size_below_the_minimum_names_it() -> None:
    with pytest.raises(ValueError, match=r"at least 258 \(256 byte tokens \+ 2 special"):
        train("abc", 257, special_tokens=["<a>", "<b>"])
    assert train("abc", 258, special_tokens=["<a>", "<b>"]).merges == []


def test_empty_corpus_gives_no_merges_and_a_warning(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for data in ([], "", [""], empty, "<s><s>"):
        with pytest.warns(UserWarning, match=r"after 0 of 43 merges.*corpus is empty"):
            tok = train(data, 300, special_tokens=["<s>"])
        assert tok.merges == []
        assert tok.special_tokens == {"<s>": 256}


def test_whitespace_only_corpus_learns_whitespace() -> None:
    # GPT-2 keeps each whitespace run whole at the end of a unit: pieces "    \n\n", "   ".
    with pytest.warns(UserWarning, match="after 5 of 10 merges"):
        tok = train(["    \n\n", "   "], 266, pattern="gpt2")
    learned = [tok.token_bytes(256 + k) for k in range(5)]
    assert learned == [b"  ", b"\n\n", b"   ", b"    ", b"    \n\n"]


def test_bad_arguments_are_refused_before_reading() -> None:
    def never() -> Any:
        raise AssertionError("data was read")
        yield ""

    cases: list[tuple[dict[str, Any], str]] = [
        ({"representation": "tree"}, "representation"),
        ({"counting": "sometimes"}, "counting"),
        ({"representation": "sequence", "counting": "non_overlapping"}, "overlapping only"),
        ({"workers": 0}, "workers"),
        ({"min_frequency": 0}, "min_frequency"),
        ({"max_token_length": 1}, "max_token_length"),
        ({"tie": "random"}, "unknown tie rule"),
        ({"score": "nope"}, "unknown score"),
        ({"pattern": "(unclosed"}, "does not compile"),
        ({"pattern": r"(\w+)"}, "capturing group"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            train(never(), 300, **kwargs)
    with pytest.raises(ValueError, match="vocab_size"):
        train(never(), -1)
    with pytest.raises(TypeError, match="progress"):
        train(never(), 300, progress="yes")  # type: ignore[arg-type]


def test_bad_data_types_are_refused() -> None:
    with pytest.raises(TypeError, match="not bytes"):
        train(b"abc", 300)
    with pytest.raises(TypeError, match="item 1 of the training data is a int"):
        train(["a", 3], 300)
    with pytest.raises(TypeError, match="iterable"):
        train(3.5, 300)
    assert list(iter_units(("a", "b"))) == ["a", "b"]
    with pytest.raises(FileNotFoundError):
        train(Path("/nonexistent/file.txt"), 300)


# -- progress and the minbpe / Hugging Face entry points -------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def start(self, total: int) -> None:
        self.events.append(("start", total))

    def update(self, n: int) -> None:
        self.events.append(("update", n))

    def close(self) -> None:
        self.events.append(("close", 0))


def test_progress_object_sees_every_merge() -> None:
    rec = Recorder()
    tok = train(TEXT[:5000], 256 + 40, progress=rec)
    assert rec.events[0] == ("start", 40)
    assert rec.events[-1] == ("close", 0)
    assert sum(n for e, n in rec.events if e == "update") == len(tok.merges) == 40


def test_progress_is_closed_when_training_fails() -> None:
    rec = Recorder()

    def boom(record: MergeRecord, token: bytes) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        train(TEXT[:2000], 300, progress=rec, on_merge=boom)
    assert rec.events[-1] == ("close", 0)


def test_progress_resolution(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert isinstance(resolve_progress(False), NullProgress)
    # Under pytest stderr is not a terminal: the default is silent.
    assert isinstance(resolve_progress(None), NullProgress)
    pytest.importorskip("tqdm")
    bar = resolve_progress(True)
    assert isinstance(bar, TqdmProgress)
    train("ab ab ab", 258, progress=True)
    assert "merges" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"bpeds\[progress\]"):
        resolve_progress(True)


def test_minbpe_style_train_prints_merges(capsys: pytest.CaptureFixture[str]) -> None:
    tok = Tokenizer(pattern=None)
    assert tok.train("aaabdaaabac", 256 + 3, verbose=True, tie="leftmost") is tok
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "merge 1/3: (97, 97) -> 256 (b'aa') had 4 occurrences"
    assert tok.merges == minbpe_merges("aaabdaaabac", 3, None)
    assert tok.pattern is None


def test_hf_style_train_from_iterator_keeps_pattern_and_special_texts() -> None:
    tok = Tokenizer(pattern="gpt2", special_tokens={"<eos>": 256})
    before = tok.encode("low lower")
    assert tok.train_from_iterator(iter(["low lower lowest"] * 3), 256 + 5 + 1) is tok
    assert tok.pattern == GPT2_PATTERN
    assert tok.special_tokens == {"<eos>": 256 + 5}
    assert len(tok.encode("low lower")) < len(before)  # the encoder was rebuilt


def test_sequence_corpus_used_in_sequence_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = MergeDriver

    def spy(corpus: Any, *args: Any, **kwargs: Any) -> MergeDriver:
        seen.append(type(corpus).__name__)
        return real(corpus, *args, **kwargs)

    monkeypatch.setattr(bpeds.tokenizer.trainer, "MergeDriver", spy)
    train("ab ab", 257, representation="sequence")
    train("ab ab", 257)
    assert seen == [SequenceCorpus.__name__, TypeCorpus.__name__]


def test_no_warning_when_all_merges_are_learned() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train(TEXT[:3000], 300)


def test_warnings_name_the_line_that_called_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Warnings point at the caller's line, however deep in training they are raised."""
    (tmp_path / "corpus.txt").write_text("x y " * 10, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    base = train("ab ab ab cd cd", 258, special_tokens=["<s>"])
    calls: list[Callable[[], object]] = [
        lambda: train(iter(["corpus.txt"]), 300, pattern=None),  # a name as text: stops early
        lambda: train({"a": "xx", "b": ""}, 260, score="group_frequency"),  # one group filled
        lambda: train("ab ab ab cd cd ef ef", 262, base=base),  # the base's <s> moves
        lambda: train(bpeds.count("x y"), 300),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught
        assert [w.filename for w in caught] == [__file__] * len(caught)


def test_merges_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    script = (
        "import json, sys; from bpeds.tokenizer.training import train; "
        "t = open(sys.argv[1], encoding='utf-8').read()[:20000]; "
        "a = train(t, 456, tie='leftmost', special_tokens=['<|a|>', '<|b|>']); "
        "b = train(t, 456, preset='hf'); print(json.dumps([a.merges, b.merges]))"
    )
    outs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(DATA / "taylorswift.txt")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(done.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert len(json.loads(outs[0])[0]) == 198


def test_training_pauses_the_cyclic_gc_and_restores_it() -> None:
    import gc

    seen: list[bool] = []
    train("abab abab", 258, on_merge=lambda *_: seen.append(gc.isenabled()))
    assert seen == [False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        train("abab abab", 257)
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train("abab abab", 258, on_merge=stop)
    assert gc.isenabled()


# -- early stops, in words -----------------------------------------------------------------


@pytest.mark.parametrize("variant", ["picky", "scaffold"])
def test_a_loop_variant_that_stops_short_says_so(variant: str) -> None:
    with pytest.warns(UserWarning, match="training stopped") as caught:
        tok = train(TEXT[:20000], 32768, variant=variant, workers=1)
    (w,) = [str(x.message) for x in caught if "training stopped" in str(x.message)]
    assert f"with {tok.vocab_size} of the 32768 tokens asked for" in w
    assert "removed or hidden by the variant" in w
    assert "every piece of the training data is now a single token" in w


def test_the_stop_warning_names_the_rule_that_stopped_the_run() -> None:
    with pytest.warns(UserWarning, match=r"score 'pmi' merges only pairs seen at least "):
        train(TEXT[:20000], 5000, score={"name": "pmi", "min_count": 50}, workers=1)
    with pytest.warns(UserWarning, match=r"no pair left occurs at least min_frequency=50 times"):
        train(TEXT[:20000], 5000, min_frequency=50, workers=1)
    with pytest.warns(UserWarning, match=r"max_token_length=3"):
        train(TEXT[:20000], 5000, max_token_length=3, workers=1)


# -- file names given as text -------------------------------------------------------------


def test_file_names_given_as_text_are_refused_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bpeds

    monkeypatch.chdir(tmp_path)
    Path("a.txt").write_text(TEXT[:3000], encoding="utf-8")
    Path("b.txt").write_text(TEXT[3000:6000], encoding="utf-8")
    for data in (["a.txt", "b.txt"], ("a.txt",), "a.txt", {"en": ["a.txt"], "de": "b.txt"}):
        with pytest.raises(ValueError, match=r"naming (an )?existing file.*files=\[\.\.\.\]"):
            train(data, 300)
        with pytest.raises(ValueError, match="str naming"):
            bpeds.count(data if not isinstance(data, dict) else data["en"])
        with pytest.raises(ValueError, match="str naming"):
            bpeds.compare([{}], train=data, heldout="some text", vocab_size=300)
        with pytest.raises(ValueError, match="str naming"):
            bpeds.compare([{}], train="some text", heldout=data, vocab_size=300)
    # the ways to say what is meant
    by_files = train(files=["a.txt", "b.txt"], vocab_size=300)
    assert by_files == train([Path("a.txt"), Path("b.txt")], 300)
    assert train(iter(["a.txt", "b.txt"]), 258).token_bytes(256) == b".t"  # text, as asked
    assert train(["a.txt", "not a file"], 258).num_merges == 2  # not every item names a file
    with pytest.raises(TypeError, match="not both"):
        train("text", 300, files=["a.txt"])
    with pytest.raises(TypeError, match="files="):
        train(vocab_size=300)


# -- progress over the whole job ------------------------------------------------------------


class StagedRecorder(Recorder):
    def stage(self, label: str, total: int | None, unit: str) -> None:
        self.events.append((f"stage {label} ({unit})", -1 if total is None else total))


def test_progress_shows_every_stage_of_the_job(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text(TEXT[:5000] + "é", encoding="utf-8")
    rec = StagedRecorder()
    train(path, 256 + 40, progress=rec)
    stages = [(e, n) for e, n in rec.events if e.startswith("stage")]
    assert stages == [
        ("stage reading (B)", path.stat().st_size),
        ("stage counting pairs (steps)", -1),
        ("stage merges (merges)", 40),
    ]
    read = rec.events[1 : rec.events.index(("stage counting pairs (steps)", -1))]
    assert sum(n for _, n in read) == path.stat().st_size  # every byte read, reported
    assert sum(n for e, n in rec.events if e == "update") == path.stat().st_size + 40


def test_superbpe_labels_its_two_runs() -> None:
    rec = StagedRecorder()
    train(TEXT[:8000], 400, variant="superbpe", progress=rec)
    labels = [e for e, _ in rec.events if e.startswith("stage")]
    assert labels[0] == "stage stage 1/2: reading (B)"
    assert "stage stage 2/2: merges (merges)" in labels


def test_a_notebook_gets_bars_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    pytest.importorskip("tqdm")

    class ZMQInteractiveShell:
        pass

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = ZMQInteractiveShell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    assert isinstance(resolve_progress(None), TqdmProgress)
    monkeypatch.delitem(sys.modules, "ipykernel")
    assert isinstance(resolve_progress(None), NullProgress)


def test_a_suspended_merge_iterator_leaves_the_gc_running() -> None:
    """The pause covers a step the driver runs, never the time a caller holds the iterator."""
    import gc

    from bpeds.corpus import TypeCorpus
    from bpeds.driver import MergeDriver

    merges = iter(MergeDriver(TypeCorpus([b"abab abab", b"abc"]), 3))
    next(merges)
    assert gc.isenabled()  # between steps, the caller's process collects as usual
    rest = list(merges)
    assert len(rest) == 2
    assert gc.isenabled()
