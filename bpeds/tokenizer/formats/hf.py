"""Hugging Face ``tokenizers``: ``tokenizer.json`` out and in, ``vocab.json`` + ``merges.txt`` in.

**Export.** :func:`hf_tokenizer_json` builds the ``tokenizer.json`` of a
byte-level BPE that ``tokenizers.Tokenizer.from_file`` loads and that encodes
like the bpeds tokenizer:

- ``pre_tokenizer``: a ``Split`` on the tokenizer's pattern, then
  ``ByteLevel(add_prefix_space=False, use_regex=False)`` (which only maps each
  byte to GPT-2's printable stand-in character, see
  :func:`~bpeds.scoring.ties.gpt2_byte_to_unicode`); no ``Split`` when the
  pattern is ``None``. The split keeps the pattern's matches and drops the
  text between them (``behavior: "Removed", invert: true``), which is what
  ``regex.findall`` -- bpeds and tiktoken -- does; ``"Isolated"`` would keep
  unmatched text as extra pieces. For a pattern that matches every character
  (the GPT-2/GPT-4/GPT-4o ones) both give the same pieces.
- ``model``: ``BPE`` with ``vocab`` (each token's bytes as stand-in
  characters -> id) and ``merges`` (``"left right"`` strings, readable by
  every ``tokenizers`` version), ``ignore_merges: false``.
- ``added_tokens``: the special tokens (``special: true``, no stripping),
  also listed in ``vocab`` so that their ids are kept even with gaps.
- ``decoder``: ``ByteLevel``.

*Pair rank versus bytes rank.* Hugging Face applies, at each step, the
adjacent pair ``(x, y)`` that is listed as a merge with the lowest index
(*pair rank*); bpeds and tiktoken apply the adjacent pair whose concatenated
bytes form the token of lowest id (*bytes rank*), whichever merge made that
token. They differ when some token can be formed from a pair that is not its
merge: with merges ``(a, a) -> aa`` and ``(a, aa) -> aaa``, ``"aaa"`` becomes
``[aa, a]`` by pair rank (there is no merge ``(aa, a)``) but ``[aaa]`` by bytes
rank. BPE training never learns such a merge (it merges left to right, so
``a`` before ``aa`` does not occur there); imported or hand-made merges can.
:func:`rank_rule_conflicts` lists the tokens whose own bytes encode
differently under the two rules; when it is empty, no text we have tried
encodes differently (see ``docs/formats.md``).

**Import.** :func:`load_hf` reads a byte-level BPE ``tokenizer.json`` (GPT-2,
RoBERTa-style without prefix space, Llama 3, or one written here);
:func:`load_hf_vocab_merges` reads GPT-2's ``vocab.json`` + ``merges.txt``
pair. Anything that is not byte-level BPE, or that changes text in a way
bpeds cannot (a normalizer, ``add_prefix_space``, dropout, subword prefixes,
stripping added tokens), is refused with a :class:`~bpeds.tokenizer.formats.FormatError`.
Post-processors (which add e.g. a BOS token) are not imported.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bpeds.scoring.ties import gpt2_byte_to_unicode
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.files import write_files
from bpeds.tokenizer.formats._common import (
    FILE_IDS_TIE,
    FormatError,
    PathLike,
    bpe_parts,
    build_tokenizer,
    check_u32_ids,
    decode_utf8,
    distinct_token_bytes,
    file_ids_tie,
    parse_json,
    public_ids,
    read_bytes,
    refuse_replay,
    renumber_specials,
)
from bpeds.tokenizer.limits import short_repr
from bpeds.tokenizer.normalize import NORMALIZERS, Form, check_normalizer
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, PATTERNS, compile_pattern
from bpeds.tokenizer.unicode_tables import ENGINE_UNICODE

if TYPE_CHECKING:
    import tokenizers

__all__ = [
    "from_hf_json",
    "hf_tokenizer_json",
    "load_hf",
    "load_hf_vocab_merges",
    "rank_rule_conflicts",
    "save_hf",
    "split_pattern",
    "to_hf",
    "warn_oniguruma_escapes",
]

_B2U = gpt2_byte_to_unicode()
_U2B = {ch: b for b, ch in _B2U.items()}
#: The bytes no UTF-8 text holds: a vocab trained on text never needs them.
NEVER_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])
_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}


def _as_text(token: bytes) -> str:
    return "".join([_B2U[b] for b in token])


# -- export -----------------------------------------------------------------------------


def hf_tokenizer_json(tok: Tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` of ``tok``, as a JSON-compatible dict.

    >>> d = hf_tokenizer_json(Tokenizer([(32, 97)], pattern=None))
    >>> d["model"]["merges"], d["model"]["vocab"]["Ġa"]
    (['Ġ a'], 256)

    Raises :class:`FormatError` when two ids have the same bytes, a special
    token's text equals a token's stand-in string (the ``vocab`` maps strings
    to one id) or a special id does not fit in 32 bits (``tokenizers`` reads
    ids as ``u32``). Complexity: O(total bytes of all tokens).
    """
    refuse_replay(tok, "a Hugging Face tokenizer.json")
    check_u32_ids(tok, "a tokenizer.json")
    tokens = [_as_text(b) for b in distinct_token_bytes(tok, "a tokenizer.json vocab")]
    vocab = dict(zip(tokens, public_ids(tok), strict=True))
    specials = sorted(tok.special_tokens.items(), key=lambda item: item[1])
    for text, i in specials:
        if text in vocab:
            raise FormatError(
                f"special token {short_repr(text)} (id {i}) has the same text as token "
                f"{vocab[text]} in "
                "a tokenizer.json vocab, which maps each string to one id; rename the special "
                "token"
            )
    model_vocab = dict(vocab)
    model_vocab.update(specials)
    byte_level = {**_BYTE_LEVEL, "use_regex": False}
    pre_tokenizer: dict[str, Any]
    if tok.pattern is None:
        pre_tokenizer = byte_level
    else:
        split = {
            "type": "Split",
            "pattern": {"Regex": tok.pattern},
            "behavior": "Removed",
            "invert": True,
        }
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": text,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for text, i in specials
        ],
        "normalizer": None if tok.normalizer is None else {"type": tok.normalizer},
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {**_BYTE_LEVEL, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": model_vocab,
            "merges": [f"{tokens[a]} {tokens[b]}" for a, b in tok.merges],
        },
    }


def save_hf(tok: Tokenizer, path: PathLike, *, overwrite: bool = False) -> Path:
    """Write ``tok`` as a Hugging Face ``tokenizer.json`` at ``path`` (atomically).

    Unless ``overwrite``, an existing file raises ``FileExistsError``. Raises
    :class:`FormatError` as :func:`hf_tokenizer_json` does.
    Complexity: O(total bytes of all tokens).
    """
    data = json.dumps(hf_tokenizer_json(tok), ensure_ascii=False, indent=2) + "\n"
    return write_files([(path, data.encode("utf-8"))], overwrite=overwrite)[0]


def to_hf(tok: Tokenizer) -> tokenizers.Tokenizer:
    """``tok`` as a live ``tokenizers.Tokenizer`` (needs the optional ``tokenizers`` package).

    Raises ``ImportError`` naming the package when it is missing, and
    :class:`FormatError` when ``tokenizers`` rejects the pattern (it compiles
    regexes with Oniguruma, whose syntax differs from ``regex`` in rare corners).
    """
    try:
        import tokenizers
    except ImportError as exc:  # pragma: no cover - tokenizers is a dev dependency
        raise ImportError(
            "converting to a Hugging Face tokenizer needs the 'tokenizers' package "
            "(pip install tokenizers)"
        ) from exc
    text = json.dumps(hf_tokenizer_json(tok))
    try:
        return tokenizers.Tokenizer.from_str(text)
    except Exception as exc:  # tokenizers raises a bare Exception
        raise FormatError(f"Hugging Face tokenizers rejects this tokenizer: {exc}") from None


# -- pair rank versus bytes rank ----------------------------------------------------------


def rank_rule_conflicts(tok: Tokenizer) -> list[int]:
    """Ids of merge tokens whose own bytes do not encode to that one token under
    pair rank (Hugging Face) or under bytes rank (bpeds, tiktoken).

    >>> rank_rule_conflicts(Tokenizer([(97, 97), (97, 256)], pattern=None))
    [257]
    >>> rank_rule_conflicts(Tokenizer([(97, 97), (256, 97)], pattern=None))
    []

    An empty list means the two rules agree on every token; see the module
    docstring for why they can differ. Complexity: O(sum over tokens of
    L log L) for tokens of L bytes, plus the byte slices bytes rank compares
    (O(L^2) for one token in the worst case).
    """
    merges = tok.merges
    pair_rank = {pair: k for k, pair in enumerate(merges)}
    token_bytes = distinct_token_bytes(tok, "bytes rank")
    public = public_ids(tok)
    id_of = {b: i for i, b in enumerate(token_bytes)}
    out: list[int] = []
    for t in range(256, 256 + len(merges)):
        piece = token_bytes[t]

        def by_pair(
            left: int, right: int, start: int, mid: int, end: int
        ) -> tuple[int, int] | None:
            k = pair_rank.get((left, right))
            return None if k is None else (k, 256 + k)

        def by_bytes(
            left: int, right: int, start: int, mid: int, end: int, piece: bytes = piece
        ) -> tuple[int, int] | None:
            i = id_of.get(piece[start:end])
            return None if i is None else (i, i)

        if [p[2] for p in bpe_parts(piece, by_pair)] != [t] or [
            p[2] for p in bpe_parts(piece, by_bytes)
        ] != [t]:
            out.append(public[t])
    return out


# -- import -----------------------------------------------------------------------------


def _fail(where: str, message: str) -> FormatError:
    return FormatError(f"{where}: {message}")


def _type(component: object) -> str | None:
    return component.get("type") if isinstance(component, dict) else None


def _byte_level_flags(where: str, step: Mapping[str, Any]) -> bool:
    """Check a ByteLevel pre-tokenizer step; return its ``use_regex``."""
    if step.get("add_prefix_space", False):
        raise _fail(
            where,
            "the ByteLevel pre-tokenizer adds a space before the text (add_prefix_space), "
            "which bpeds does not do",
        )
    use_regex = step.get("use_regex", True)
    if not isinstance(use_regex, bool):
        raise _fail(
            where, f"ByteLevel use_regex must be true or false, got {short_repr(use_regex)}"
        )
    return use_regex


#: The ``behavior`` values of Hugging Face's ``Split`` pre-tokenizer.
SPLIT_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def split_pattern(pattern: str, behavior: str, invert: bool = False) -> str:
    """A pattern whose ``findall`` pieces are those Hugging Face's ``Split(pattern,
    behavior, invert)`` pre-tokenizer cuts a text into.

    >>> import regex
    >>> text = "the cat sat on the mat, 123 times!!"
    >>> regex.findall(split_pattern(r"\\p{N}+|!+", "Isolated"), text)
    ['the cat sat on the mat, ', '123', ' times', '!!']
    >>> regex.findall(split_pattern(r"\\p{N}+|!+", "MergedWithNext"), text)
    ['the cat sat on the mat, ', '123 times', '!!']

    Hugging Face finds the pattern's matches left to right (each search starting where
    the last match ended), which with the *gaps* between them cover the text, then:
    ``Removed`` drops the matches, ``Isolated`` keeps matches and gaps as pieces,
    ``MergedWithPrevious``/``MergedWithNext`` append a match to the gap before it /
    prepend it to the gap after it (a match next to another match, or with no gap
    on that side, stays alone), ``Contiguous`` joins matches that follow each other;
    ``invert`` swaps the roles of matches and gaps. With ``P = (?:pattern)`` and
    ``G = (?:(?!P)[\\s\\S])+`` (a gap: characters up to where ``P`` next matches),
    the pieces are the matches of ``P`` (Removed, inverted), ``P|G`` (Isolated, either
    way), ``P+|G`` (Contiguous, either way), ``G(?:P)?|P`` (MergedWithPrevious, or
    MergedWithNext inverted), ``P(?:G)?|G`` (MergedWithNext, or MergedWithPrevious
    inverted) and ``P++\\KG|...`` (Removed: the gaps, skipping the matches before them;
    text that ends in matches gives one empty piece, which encodes to nothing). GPT-2's,
    GPT-4's and GPT-4o's patterns match at every position (no gaps), so Isolated and the
    Merged behaviours keep them as they are. Exact
    for a pattern that never matches the empty string: :func:`from_hf_json` refuses one
    that matches it at the start of a short probe text. Tested against ``tokenizers`` on
    real text for every behaviour, both ways (``tests/test_peer_parity.py``).
    """
    if behavior not in SPLIT_BEHAVIORS or not isinstance(invert, bool):
        raise ValueError(
            f"a Split behavior is one of {list(SPLIT_BEHAVIORS)} and invert a bool, got "
            f"{behavior!r} and {invert!r}"
        )
    if behavior == "Removed" and invert:
        return pattern
    if pattern in PATTERNS.values() and behavior != "Contiguous" and behavior != "Removed":
        return pattern  # GPT-2's, GPT-4's and GPT-4o's match at every position: no gaps
    p = f"(?:{pattern})"
    gap = f"(?:(?!{p})[\\s\\S])+"
    if behavior == "Removed":
        return f"{p}++\\K(?:{gap}|\\Z)|{gap}"
    if behavior == "Isolated":
        return f"{p}|{gap}"
    if behavior == "Contiguous":
        return f"{p}+|{gap}"
    if (behavior == "MergedWithPrevious") != invert:
        return f"{gap}{p}?|{p}"
    return f"{p}(?:{gap})?|{gap}"


#: Texts a Split pattern must not match the empty string at the start of (see
#: :func:`split_pattern`).
_EMPTY_PROBES = ("", "a", "A", "0", " ", "\n", ".", "\u00e9", "\u4e00")


def _split_pattern(where: str, step: Mapping[str, Any]) -> str:
    pattern = step.get("pattern")
    behavior, invert = step.get("behavior"), step.get("invert", False)
    if behavior not in SPLIT_BEHAVIORS or not isinstance(invert, bool):
        raise _fail(
            where,
            f"a Split pre-tokenizer with behavior {short_repr(behavior)} and invert "
            f"{short_repr(invert)}: the behavior must be one of {list(SPLIT_BEHAVIORS)} and "
            "invert true or false",
        )
    import regex

    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        source = str(pattern["Regex"])
    elif isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        source = str(regex.escape(pattern["String"]))
    else:
        raise _fail(
            where,
            "a Split pre-tokenizer's pattern must be a Regex or a String, got "
            f"{short_repr(pattern)}",
        )
    if (behavior, invert) == ("Removed", True):
        return source
    try:
        compiled = compile_pattern(source)
    except ValueError as exc:
        raise _fail(where, str(exc)) from None
    for probe in _EMPTY_PROBES:
        m = compiled.match(probe)
        if m is not None and m.end() == 0:
            raise _fail(
                where,
                f"the Split pattern {short_repr(source)} matches the empty string (at the "
                f"start of {probe!r}), where Hugging Face cuts text at every empty match; "
                "bpeds reproduces Split only for patterns that never match it",
            )
    return split_pattern(source, behavior, invert)


#: Escapes Oniguruma reads otherwise than ``regex`` and Rust: its word characters (``\\w``,
#: ``\\W``, and the boundaries ``\\b``, ``\\B`` they define) differ on about a thousand
#: code points (U+200C, U+00B2, ...), and ``\\h`` is a hex digit there.
_ONIGURUMA_ESCAPES = frozenset("wWbBhH")


def warn_oniguruma_escapes(pattern: str | None, where: str, stacklevel: int = 3) -> None:
    """Warn (``UserWarning``) when ``pattern`` uses an escape Oniguruma, Hugging Face's
    regex engine, reads otherwise than ``regex`` does (see :data:`_ONIGURUMA_ESCAPES`):
    text holding the code points they disagree on encodes differently there. O(len)."""
    if pattern is None:
        return
    i = pattern.find("\\")
    while 0 <= i < len(pattern) - 1:
        if pattern[i + 1] in _ONIGURUMA_ESCAPES:
            warnings.warn(
                f"{where}: the split pattern uses \\{pattern[i + 1]}, which Hugging Face's "
                "Oniguruma reads otherwise than bpeds's regex (its word characters differ on "
                "about a thousand code points, such as U+200C): text holding them encodes "
                "differently; write the classes out with \\p{...} for an exact match",
                UserWarning,
                stacklevel=stacklevel,
            )
            return
        i = pattern.find("\\", i + 2)


def _pattern_of(where: str, pre: object) -> str | None:
    """The split pattern a byte-level pre-tokenizer amounts to (None: no split)."""
    steps: list[Any]
    if isinstance(pre, dict) and _type(pre) == "Sequence":
        steps = pre.get("pretokenizers", [])
        if not isinstance(steps, list):
            raise _fail(where, "a Sequence pre-tokenizer's pretokenizers must be a list")
    elif pre is None:
        steps = []
    else:
        steps = [pre]
    kinds = [_type(s) for s in steps]
    if "ByteLevel" not in kinds:
        raise _fail(
            where,
            "not a byte-level BPE: its pre-tokenizer has no ByteLevel step "
            f"(found {kinds or 'none'}); bpeds models work on UTF-8 bytes",
        )
    if kinds[-1] != "ByteLevel" or kinds.count("ByteLevel") != 1:
        raise _fail(where, f"unsupported pre-tokenizer sequence {kinds}: ByteLevel must come last")
    use_regex = _byte_level_flags(where, steps[-1])
    splits = steps[:-1]
    for kind in kinds[:-1]:
        if kind != "Split":
            raise _fail(
                where, f"unsupported pre-tokenizer {short_repr(kind)} (bpeds splits with one regex)"
            )
    if len(splits) + use_regex > 1:
        raise _fail(
            where,
            "the pre-tokenizer splits text twice (several Split steps, or a Split and a "
            "ByteLevel with use_regex); bpeds splits with one regex",
        )
    if use_regex:
        return GPT2_PATTERN
    if splits:
        return _split_pattern(where, splits[0])
    return None


def _check_model(where: str, model: object) -> dict[str, Any]:
    if not isinstance(model, dict):
        raise _fail(where, "no 'model' object")
    if model.get("type", "BPE") != "BPE":
        raise _fail(where, f"not a BPE model (model type {short_repr(model.get('type'))})")
    if model.get("dropout") not in (None, 0, 0.0):
        raise _fail(where, "the model uses BPE dropout, which makes encoding random")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _fail(
                where, f"the model uses {key} {short_repr(model[key])}: not a byte-level BPE"
            )
    if model.get("byte_fallback"):
        raise _fail(where, "the model uses byte_fallback: not a byte-level BPE")
    return model


def _vocab_of(where: str, vocab: object) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise _fail(where, "the vocab must be an object mapping token strings to ids")
    seen: dict[int, str] = {}
    for text, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise _fail(
                where, f"token {short_repr(text)} has id {short_repr(i)}; ids are integers >= 0"
            )
        if i in seen:
            raise _fail(where, f"tokens {short_repr(seen[i])} and {short_repr(text)} share id {i}")
        seen[i] = text
    return vocab


def _merges_of(where: str, merges: object) -> list[tuple[str, str]]:
    if not isinstance(merges, list):
        raise _fail(where, "the merges must be a list")
    out: list[tuple[str, str]] = []
    for k, m in enumerate(merges):
        parts = m.split(" ") if isinstance(m, str) else m
        if (
            not isinstance(parts, list)
            or len(parts) != 2
            or not all(isinstance(p, str) and p for p in parts)
        ):
            raise _fail(
                where, f"merge {k} must be 'left right' or [left, right], got {short_repr(m)}"
            )
        out.append((parts[0], parts[1]))
    return out


def _assemble(
    where: str,
    imported_from: Literal["tokenizer.json", "vocab.json+merges.txt"],
    vocab: Mapping[str, int],
    merges: Iterable[tuple[str, str]],
    specials: Mapping[str, int],
    pattern: str | None,
    renumber: bool,
    unicode: str | None,
) -> Tokenizer:
    """Map string merges onto bpeds ids and build the tokenizer (see :func:`from_hf_json`).

    ``imported_from`` is recorded in the options, and, when ``renumber`` changes the
    order of the bytes, the tie rule of the file's ids (:data:`FILE_IDS_TIE`). Vocab
    entries that are neither bytes nor made by a merge become special tokens (GPT-2's
    ``<|endoftext|>``). The bytes that never occur in UTF-8 may be missing from the vocab
    (Hugging Face's trainer leaves them out unless given ``initial_alphabet``); any other
    missing byte is an error.
    """
    ours: dict[str, int] = {}
    for b in range(256):
        text = _B2U[b]
        if text in vocab:
            ours[text] = b
        elif b not in NEVER_UTF8:
            raise _fail(
                where,
                f"the vocab lacks byte 0x{b:02x} (written {short_repr(text)}), which text can "
                "hold: Hugging Face drops such a byte when encoding (there is no unk_token), "
                "bpeds encodes every byte; train it with initial_alphabet="
                "pre_tokenizers.ByteLevel.alphabet() to have all 256",
            )
    pairs: list[tuple[int, int]] = []
    for k, (left, right) in enumerate(merges):
        for part in (left, right):
            if part not in ours:
                known = (
                    "is not in the vocab"
                    if part not in vocab
                    else "comes before any merge makes it"
                )
                raise _fail(
                    where,
                    f"merge {k} ({short_repr(left)}, {short_repr(right)}) uses "
                    f"{short_repr(part)}, which {known}",
                )
        new = left + right
        if new not in vocab:
            raise _fail(where, f"merge {k} makes {short_repr(new)}, which is not in the vocab")
        if new in ours:
            raise _fail(
                where,
                f"merge {k} ({short_repr(left)}, {short_repr(right)}) makes "
                f"{short_repr(new)}, which an earlier merge already "
                "makes; bpeds has one merge per token",
            )
        ours[new] = 256 + len(pairs)
        pairs.append((ours[left], ours[right]))
    specials = dict(specials)
    specials.update((t, i) for t, i in vocab.items() if t not in ours and t not in specials)
    options: dict[str, Any] = {"imported_from": imported_from}
    ids: list[int] | None = None
    if not renumber:
        # the file's own ids, kept (bpeds's order inside: bytes by value, merges in order);
        # a byte the file leaves out (one no UTF-8 text holds) takes its own value if free,
        # else an id after every id the file uses
        ids = [-1] * (256 + len(pairs))
        for text, i in ours.items():
            ids[i] = vocab[text]
        used = {*vocab.values(), *specials.values()}
        nxt = max(used, default=-1) + 1
        for b in range(256):
            if ids[b] < 0:
                if b in used:
                    ids[b], nxt = nxt, nxt + 1
                else:
                    ids[b] = b
                used.add(ids[b])
    else:
        specials = renumber_specials(specials, 256 + len(pairs))
        tie = file_ids_tie({_U2B[t]: vocab[t] for t in ours if len(t) == 1 and t in _U2B})
        if tie is not None:
            options[FILE_IDS_TIE] = tie
    return build_tokenizer(
        where,
        pairs,
        pattern=pattern,
        special_tokens=specials,
        options=options,
        unicode=unicode,
        ids=ids,
    )


def _check_source(where: str, pattern: str | None) -> str | None:
    """A pattern source that bpeds would read as one of its pattern names is refused."""
    if pattern in PATTERNS:
        raise _fail(
            where,
            f"the split pattern is the literal regex {short_repr(pattern)}, which bpeds would "
            "read as "
            "the name of one of its own patterns",
        )
    return pattern


def from_hf_json(
    data: Mapping[str, Any] | str,
    *,
    renumber: bool = False,
    source: str = "<tokenizer.json>",
    unicode: str | None = ENGINE_UNICODE,
) -> Tokenizer:
    """A tokenizer from a byte-level BPE ``tokenizer.json`` (parsed, or its text).

    >>> tok = Tokenizer([(32, 97)], pattern="gpt2", special_tokens={"<s>": 257})
    >>> from_hf_json(hf_tokenizer_json(tok)) == Tokenizer(
    ...     [(32, 97)], pattern="gpt2", special_tokens={"<s>": 257},
    ...     options={"imported_from": "tokenizer.json"}, unicode="16.0")
    True

    The pattern comes from the pre-tokenizer (``ByteLevel(use_regex=true)``
    means GPT-2's pattern; a ``Split`` of any behaviour becomes the pattern that cuts
    text as it does, :func:`split_pattern`), read with ``unicode``'s tables (default
    Oniguruma's, Unicode 16.0, so that encoding equals Hugging Face's on every code
    point); ``added_tokens`` become special tokens, and so do vocab entries that are
    neither bytes nor made by a merge (a GPT-2 tokenizer built from ``encoder.json`` and
    ``vocab.bpe`` holds ``<|endoftext|>`` so; Hugging Face never emits such an entry and
    encodes its text as ordinary text, as bpeds's ``encode_ordinary`` does). Ids must
    already follow bpeds's numbering (bytes by value, merge ``k`` as
    ``256 + k``) unless ``renumber``: then bytes and merges are renumbered so,
    and special tokens follow the merges in their original order. Raises
    :class:`FormatError` for anything that is not a byte-level BPE bpeds can
    reproduce (see the module docstring). Complexity: O(size of the vocab).
    """
    if isinstance(data, str):
        data = parse_json(data, source)
    if not isinstance(data, Mapping):
        raise _fail(source, "a tokenizer.json holds a JSON object")
    form = _normalizer_of(source, data.get("normalizer"))
    pattern = _check_source(source, _pattern_of(source, data.get("pre_tokenizer")))
    warn_oniguruma_escapes(pattern, source)
    model = _check_model(source, data.get("model"))
    vocab = _vocab_of(source, model.get("vocab"))
    merges = _merges_of(source, model.get("merges", []))
    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise _fail(source, "added_tokens must be a list")
    specials: dict[str, int] = {}
    for entry in added:
        if not (isinstance(entry, dict) and isinstance(entry.get("content"), str)):
            raise _fail(
                source, f"an added token must have a 'content' string, got {short_repr(entry)}"
            )
        text, i = entry["content"], entry.get("id")
        if isinstance(i, bool) or not isinstance(i, int):
            raise _fail(
                source, f"added token {short_repr(text)} has id {short_repr(i)}; ids are integers"
            )
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise _fail(
                    source,
                    f"added token {short_repr(text)} sets {flag}, which changes how it matches "
                    "text; "
                    "bpeds special tokens match their exact text",
                )
        if text in vocab and vocab[text] != i:
            raise _fail(
                source, f"added token {short_repr(text)} has id {i} but {vocab[text]} in the vocab"
            )
        specials[text] = i
    tok = _assemble(source, "tokenizer.json", vocab, merges, specials, pattern, renumber, unicode)
    if form is None:
        return tok
    return tok._replaced(normalizer=form)


def _normalizer_of(source: str, normalizer: object) -> Form | None:
    """The Unicode normalisation form of a ``tokenizer.json``'s normalizer (``NFC``,
    ``NFD``, ``NFKC``, ``NFKD``, alone or the one step of a ``Sequence``), or ``None``;
    any other normalizer changes text in ways bpeds does not reproduce."""
    if normalizer is None:
        return None
    steps = [normalizer]
    if isinstance(normalizer, Mapping) and _type(normalizer) == "Sequence":
        inner = normalizer.get("normalizers") or []
        steps = inner if isinstance(inner, list) else [inner]
        if not steps:
            return None
    if len(steps) == 1 and isinstance(steps[0], Mapping) and _type(steps[0]) in NORMALIZERS:
        return check_normalizer(_type(steps[0]))
    raise _fail(
        source,
        f"the normalizer {short_repr(_type(normalizer))} changes text before tokenization; "
        f"bpeds reproduces only the Unicode normalisation forms {', '.join(NORMALIZERS)}",
    )


def load_hf(
    path: PathLike, *, renumber: bool = False, unicode: str | None = ENGINE_UNICODE
) -> Tokenizer:
    """Read a byte-level BPE ``tokenizer.json`` file (see :func:`from_hf_json`).

    A missing file raises ``FileNotFoundError``; anything wrong with it,
    :class:`FormatError`. Complexity: O(size of the file).
    """
    source = str(path)
    text = decode_utf8(read_bytes(path, "a tokenizer.json file"), source)
    return from_hf_json(text, renumber=renumber, source=source, unicode=unicode)


def load_hf_vocab_merges(
    vocab_path: PathLike,
    merges_path: PathLike,
    *,
    pattern: str | None = "gpt2",
    renumber: bool = False,
    unicode: str | None = ENGINE_UNICODE,
) -> Tokenizer:
    """Read a GPT-2-style ``vocab.json`` + ``merges.txt`` pair (``unicode`` as for
    :func:`from_hf_json`).

    ``merges.txt`` holds one ``left right`` merge per line after an optional
    ``#version`` line. These files carry no pre-tokenizer, so ``pattern``
    (default GPT-2's) says how text is split, and vocab entries that no merge
    makes and that are not bytes (GPT-2's ``<|endoftext|>``) become special
    tokens. ``renumber`` is as for :func:`from_hf_json` (GPT-2's own files
    number the 256 bytes in another order, so they need it). Raises
    :class:`FormatError` naming the file and what is wrong.
    Complexity: O(size of the files).
    """
    vsource, msource = str(vocab_path), str(merges_path)
    vocab_text = decode_utf8(read_bytes(vocab_path, "a vocab.json file"), vsource)
    vocab = _vocab_of(vsource, parse_json(vocab_text, vsource))
    merges: list[tuple[str, str]] = []
    lines = decode_utf8(read_bytes(merges_path, "a merges.txt file"), msource).split("\n")
    for n, raw in enumerate(lines, 1):
        line = raw.removesuffix("\r")
        if (n == 1 and line.startswith("#version")) or not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise _fail(
                f"{msource}, line {n}", f"a merge line is 'left right', got {short_repr(line)}"
            )
        merges.append((parts[0], parts[1]))
    where = f"{vsource} + {msource}"
    return _assemble(where, "vocab.json+merges.txt", vocab, merges, {}, pattern, renumber, unicode)
