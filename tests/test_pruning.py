"""Pruning a trained tokenizer: the rules select what their definitions say, the pruned
tokenizer encodes exactly as its event log replays, and it works through the command line,
save and load, and compare."""

from __future__ import annotations

import collections
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds
from bpeds.cli import main
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import FormatError, save_hf
from bpeds.tokenizer.pretokenize import compile_pattern
from bpeds.tokenizer.pruning import Residues, TokenUse, Trim, prune_rule, token_use
from bpeds.vocab import apply_merge
from tests.budget import examples

DATA = Path(__file__).parent / "data"


@cache
def text() -> str:
    return (DATA / "taylorswift.txt").read_text(encoding="utf-8")[:60000]


@cache
def heldout() -> str:
    return (DATA / "taylorswift.txt").read_text(encoding="utf-8")[60000:90000]


@cache
def trained() -> Tokenizer:
    return bpeds.train(text(), 900, workers=1)


def _replay(tok: Tokenizer, piece: str) -> list[int]:
    """The whole log applied in order to one piece, the obvious way."""
    ids = list(piece.encode("utf-8"))
    for e in tok.events or []:
        if e[0] == "merge":
            ids = apply_merge(ids, e[2], e[3], e[1])
        elif e[0] == "remove":
            ids = [p for t in ids for p in (e[2:] if t == e[1] else [t])]
    return ids


def _naive_use(tok: Tokenizer, data: str) -> TokenUse:
    """F1 and F2 by replaying every merge over every piece occurrence (plain tokenizers
    trained by BPE, whose rank encoding is this replay)."""
    size = 256 + len(tok.merges)
    final, inter = [0] * size, [0] * size
    assert tok.pattern is not None
    pieces = collections.Counter(compile_pattern(tok.pattern).findall(data))
    for piece, n in pieces.items():
        ids = list(piece.encode("utf-8"))
        for k, (a, b) in enumerate(tok.merges):
            if len(ids) < 2:
                break
            out = apply_merge(ids, a, b, 256 + k)
            inter[a] += (len(ids) - len(out)) * n
            inter[b] += (len(ids) - len(out)) * n
            ids = out
        for t in ids:
            final[t] += n
    return TokenUse(final, inter, sum(final))


def _expand(ids: list[int], removed: set[int], tok: Tokenizer) -> list[int]:
    """subword-nmt's recursive split: a removed token becomes its parents, recursively."""
    out: list[int] = []
    stack = list(reversed(ids))
    while stack:
        t = stack.pop()
        if t in removed:
            stack += reversed(tok.merges[t - 256])
        else:
            out.append(t)
    return out


def test_token_use_counts_final_and_intermediate_occurrences() -> None:
    tok = trained()
    use = token_use(tok, text(), workers=1)
    naive = _naive_use(tok, text())
    assert use.final == naive.final
    assert use.intermediate[256:] == naive.intermediate[256:]
    assert use.tokens == len(tok.encode(text()))


@pytest.mark.parametrize("threshold", [1, 5])
def test_trim_splits_rare_subwords_into_their_parts(threshold: int) -> None:
    """Trimmed BPE: every merged token emitted fewer than ``threshold`` times on the text is
    removed, and encoding any text is the original encoding with each removed token split
    into its parts (recursively), as subword-nmt's vocabulary threshold does."""
    tok = trained()
    pruned = bpeds.prune(tok, text(), Trim(threshold), workers=1)
    use = token_use(tok, text(), workers=1)
    removed = {t for t in range(256, len(use.final)) if use.final[t] < threshold}
    assert removed
    assert {e[1] for e in pruned.events or [] if e[0] == "remove"} == removed
    assert pruned.vocab_size == tok.vocab_size - len(removed)
    for sample in (text()[:5000], heldout()):
        ours = pruned.encode(sample)
        assert ours == _expand(tok.encode(sample), removed, tok)
        assert not removed & set(ours)
        assert pruned.decode(ours) == sample


def test_litetoken_removes_the_residues_by_its_ratio() -> None:
    tok = trained()
    pruned = bpeds.prune(tok, text(), {"name": "litetoken", "threshold": 0.1}, workers=1)
    use = _naive_use(tok, text())
    expected = {
        t
        for t in range(256, len(use.final))
        if use.final[t] + use.intermediate[t]
        and use.final[t] / (use.final[t] + use.intermediate[t]) < 0.1
    }
    removed = {e[1] for e in pruned.events or [] if e[0] == "remove"}
    assert removed == expected
    assert 0 < len(removed) < 0.5 * len(tok.merges)
    # longer tokens built through a residue are still made:
    assert any(a in removed or b in removed for a, b in tok.merges[max(removed) - 255 :])
    assert pruned.encode(heldout()) == _expand(tok.encode(heldout()), removed, tok)


def test_a_rule_that_removes_nothing_encodes_as_the_original() -> None:
    tok = trained()
    same = bpeds.prune(tok, text(), lambda tokenizer, use: [], workers=1)
    assert same.encode(heldout()) == tok.encode(heldout())
    assert same.vocab_size == tok.vocab_size
    assert same.options["pruned"] == [{"name": "<lambda>", "removed": 0}]


@settings(max_examples=examples(ci=60, local=15), deadline=None)
@given(
    chosen=st.sets(st.integers(256, 899), max_size=60),
    sample=st.text(alphabet="Taylor Swift album tour, 2019.\n", max_size=80),
)
def test_a_users_rule_gives_a_tokenizer_that_encodes_as_its_log_replays(
    chosen: set[int], sample: str
) -> None:
    """Any set of merged tokens, removed: encoding is the replay of the pruned log, piece by
    piece, and nothing removed is emitted."""
    pruned = bpeds.prune(trained(), "x", lambda tokenizer, use: chosen, workers=1)
    assert pruned.pattern is not None
    pieces = compile_pattern(pruned.pattern).findall(sample)
    assert pruned.encode(sample) == [t for p in pieces for t in _replay(pruned, p)]
    assert not chosen & set(pruned.encode(sample))


def test_pruning_twice_saving_and_loading(tmp_path: Path) -> None:
    once = bpeds.prune(trained(), text(), Trim(3), workers=1)
    twice = bpeds.prune(once, text(), Residues(0.2), workers=1)
    assert [p["name"] for p in twice.options["pruned"]] == ["trim", "litetoken"]
    assert twice.vocab_size < once.vocab_size
    twice.save(tmp_path / "p.json")
    again = Tokenizer.load(tmp_path / "p.json")
    assert again == twice
    assert again.encode(heldout()) == twice.encode(heldout())
    with pytest.raises(FormatError):
        save_hf(twice, tmp_path / "tokenizer.json")


@pytest.mark.parametrize(
    ("rule", "error", "message"),
    [
        (lambda tok, use: [65], ValueError, "not a merged token"),
        (lambda tok, use: [10**6], ValueError, "not a merged token"),
        ("nope", ValueError, "unknown pruning rule"),
        ({"name": "trim", "thresh": 2}, ValueError, "does not take options"),
        ({"name": "litetoken", "threshold": 2.0}, ValueError, "threshold"),
        (3, TypeError, "pruning rule"),
    ],
)
def test_bad_rules_are_refused(rule: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        bpeds.prune(trained(), "some text", rule, workers=1)


def test_a_removed_token_cannot_be_removed_again() -> None:
    once = bpeds.prune(trained(), text(), Trim(2), workers=1)
    gone = next(e[1] for e in once.events or [] if e[0] == "remove")
    with pytest.raises(ValueError, match="already removed"):
        bpeds.prune(once, "x", lambda tok, use: [gone], workers=1)


def test_the_pruned_tokenizer_keeps_its_unicode_tables_and_normaliser() -> None:
    """What else the tokenizer was made with carries over: it encodes NFC-normalised text
    with the same split, only without the removed tokens."""
    tok = bpeds.train(text()[:20000], 400, normalizer="NFC", unicode="16.0", workers=1)
    pruned = bpeds.prune(tok, text()[:20000], Trim(3), workers=1)
    assert (pruned.normalizer, pruned.unicode) == ("NFC", "16.0")
    decomposed = "Beyonce\u0301 cafe\u0301"
    assert pruned.decode(pruned.encode(decomposed)) == "Beyonc\u00e9 caf\u00e9"


def test_a_tokenizer_with_its_own_ids_is_refused_with_the_way_round() -> None:
    tok = trained()
    own = Tokenizer(tok.merges, pattern=tok.pattern, ids=[*range(1, 256 + len(tok.merges)), 0])
    with pytest.raises(ValueError, match=r"renumbered\(\)"):
        bpeds.prune(own, text()[:2000], Trim(2), workers=1)
    assert bpeds.prune(own.renumbered(), text()[:2000], Trim(2), workers=1).ids is None


def test_command_line_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "t.txt"
    corpus.write_text(text(), encoding="utf-8")
    trained().save(tmp_path / "m.json")
    out = tmp_path / "p.json"
    status = main(["prune", str(tmp_path / "m.json"), str(corpus), "-o", str(out)])
    assert status == 0
    assert "removed" in capsys.readouterr().err
    pruned = Tokenizer.load(out)
    assert pruned == bpeds.prune(trained(), Path(corpus), "litetoken", workers=1)
    c = bpeds.compare(
        {"plain": trained(), "pruned": pruned}, train=text(), heldout=heldout(), workers=1
    )
    rows = {r["config"]: r for r in c.rows}
    assert rows["pruned"]["vocab_size"] == pruned.vocab_size
    assert rows["pruned"]["bytes_per_token"] <= rows["plain"]["bytes_per_token"]
    counts = collections.Counter(pruned.encode(heldout()))
    assert rows["pruned"]["bytes_per_token"] == pytest.approx(
        len(heldout().encode()) / sum(counts.values())
    )


def test_prune_rule_specs() -> None:
    assert prune_rule("trim").describe() == {"name": "trim", "threshold": 1}
    assert prune_rule(Residues()).describe() == {"name": "litetoken", "threshold": 0.05}
