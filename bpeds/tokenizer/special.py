"""Special tokens: validating their texts and ids, and finding them in text.

The one home of these rules, shared by :class:`~bpeds.tokenizer.Tokenizer`,
training (:func:`bpeds.tokenizer.training.train`), reading training text
(:mod:`bpeds.tokenizer.io`) and encoding (:mod:`bpeds.tokenizer.encoder`):

- :func:`check_special_texts`: texts are non-empty, unique, valid Unicode, and
  no proper suffix of one is a proper prefix of another;
- :func:`check_special_ids`: ids are ints, unique, and above the byte and
  merge ids;
- :func:`special_token_regex`: a regex finding them, leftmost first, then
  longest;
- :func:`special_texts`, :func:`special_list`: the ``special_tokens=``
  argument of training and counting (a list of texts, or a dict text -> id).

Problems raise :class:`~bpeds.errors.TokenizerError` (a ``ValueError``), or
``TypeError`` for values of the wrong type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import regex

from bpeds.errors import TokenizerError
from bpeds.vocab import BYTE_TOKENS

__all__ = [
    "check_special_ids",
    "check_special_texts",
    "special_list",
    "special_texts",
    "special_token_regex",
    "split_around",
]

_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_MOD = (1 << 61) - 1
_BASE = 1_000_003


def check_special_texts(texts: Iterable[object]) -> list[str]:
    """Validate special-token texts: non-empty, unique, valid Unicode, no partial overlap.

    One text inside another is allowed (encoding takes the longest at a
    position); a proper suffix of one that is a proper prefix of another is
    not, because the text ``"<a|b>"`` would then hold two specials at once.
    Returns the texts as a list, in order. Complexity: O(total length of the
    texts), expected (rolling hashes).

    >>> check_special_texts(["<|a|>", "<|a|>x"])
    ['<|a|>', '<|a|>x']
    >>> check_special_texts(["ab", "bc"])
    Traceback (most recent call last):
    ...
    bpeds.errors.TokenizerError: special tokens 'ab' and 'bc' overlap: ...
    """
    out: list[str] = []
    seen: set[str] = set()
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"a special token is a str, got {type(t).__name__} {t!r}")
        if not t:
            raise TokenizerError("a special token must not be the empty string")
        if t in seen:
            raise TokenizerError(f"special token {t!r} is given twice")
        if _SURROGATE.search(t):
            raise TokenizerError(
                f"special token {t!r} holds a lone surrogate, which has no UTF-8 encoding"
            )
        seen.add(t)
        out.append(t)
    # Index every proper prefix by (length, rolling hash); look every proper suffix up in
    # it, and compare the strings only on a hash hit: O(total length) expected.
    prefixes: dict[tuple[int, int], list[int]] = {}
    for j, b in enumerate(out):
        h = 0
        for k in range(1, len(b)):
            h = (h * _BASE + ord(b[k - 1])) % _MOD
            prefixes.setdefault((k, h), []).append(j)
    for a in out:
        h, power = 0, 1
        for k in range(1, len(a)):
            h = (ord(a[-k]) * power + h) % _MOD
            power = power * _BASE % _MOD
            for j in prefixes.get((k, h), ()):
                b = out[j]
                if b is a or a in b or b in a or a[-k:] != b[:k]:
                    continue
                raise TokenizerError(
                    f"special tokens {a!r} and {b!r} overlap: {a[-k:]!r} ends one and "
                    "starts the other, so a text could hold both at once; rename one"
                )
    return out


def check_special_ids(
    special_tokens: Mapping[str, object], num_merges: int, *, merges_are: str = ""
) -> dict[str, int]:
    """Validate a mapping special text -> id for a tokenizer with ``num_merges`` merges.

    The texts must pass :func:`check_special_texts`; the ids must be ints
    (``bool`` is not an id), unique, and at least ``256 + num_merges`` (ids
    below are the bytes and the merges). ``merges_are`` completes the message
    about those merges (training passes ``" that vocab_size asks for"``).
    Returns a new ``dict``, in the mapping's order. Complexity: O(number of
    special tokens + their total length).

    >>> check_special_ids({"<s>": 300}, 10)
    {'<s>': 300}
    >>> check_special_ids({"<s>": 257}, 2)
    Traceback (most recent call last):
    ...
    bpeds.errors.TokenizerError: special token '<s>' has id 257, which belongs to a merge token: ...
    """
    if not isinstance(special_tokens, Mapping):
        raise TypeError(
            f"special tokens with ids are a mapping text -> id, got {type(special_tokens).__name__}"
        )
    first = BYTE_TOKENS + num_merges
    out: dict[str, int] = {}
    owner: dict[int, str] = {}
    for text in check_special_texts(special_tokens.keys()):
        i = special_tokens[text]
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(
                f"the id of special token {text!r} must be an int, got {type(i).__name__} {i!r}"
            )
        if i < 0:
            raise TokenizerError(f"special token {text!r} has a negative id {i}")
        if i < first:
            kind = "byte" if i < BYTE_TOKENS else "merge"
            raise TokenizerError(
                f"special token {text!r} has id {i}, which belongs to a {kind} token: ids "
                f"0..{first - 1} are the {BYTE_TOKENS} bytes and the {num_merges} "
                f"merge(s){merges_are}; use ids >= {first}"
            )
        if i in owner:
            raise TokenizerError(f"special tokens {owner[i]!r} and {text!r} share the id {i}")
        owner[i] = text
        out[text] = i
    return out


def split_around(
    text: str,
    texts: Iterable[str],
    ids: Mapping[str, int],
    ordinary: Callable[[str], list[int]],
) -> list[int]:
    """``ordinary`` of the text between the occurrences of the special ``texts`` (leftmost,
    then longest), with each occurrence's id from ``ids`` between them.

    >>> split_around("ab<s>c", ["<s>"], {"<s>": 9}, lambda t: [ord(c) for c in t])
    [97, 98, 9, 99]

    O(len(text)) plus ``ordinary``'s cost.
    """
    out: list[int] = []
    pos = 0
    for m in special_token_regex(texts).finditer(text):
        out += ordinary(text[pos : m.start()])
        out.append(ids[m.group()])
        pos = m.end()
    out += ordinary(text[pos:])
    return out


def special_token_regex(texts: Iterable[str]) -> regex.Pattern[str]:
    """A regex finding the given texts, leftmost first, then longest at one position.

    >>> special_token_regex(["<a>", "<a>b"]).findall("x<a>b<a>")
    ['<a>b', '<a>']
    """
    ordered = sorted(set(texts), key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def special_texts(
    special_tokens: Iterable[str] | Mapping[str, int],
) -> tuple[list[str], Mapping[str, int] | None]:
    """The texts of a ``special_tokens=`` argument, checked (:func:`check_special_texts`),
    and the mapping text -> id if one was given (its ids are checked by
    :func:`check_special_ids` once the merges are known).

    >>> special_texts({"<s>": 300})
    (['<s>'], {'<s>': 300})

    A bare ``str`` or a non-iterable raises ``TypeError``. O(total length of the texts).
    """
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts or a dict text -> id, not a str")
    if isinstance(special_tokens, Mapping):
        return check_special_texts(special_tokens.keys()), special_tokens
    if not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of texts or a dict, got {type(special_tokens).__name__}"
        )
    return check_special_texts(special_tokens), None


def special_list(special_tokens: Iterable[str]) -> list[str]:
    """The texts of a ``special_tokens=`` argument as they are (a dict's keys), unchecked;
    a bare ``str`` raises ``TypeError``.

    >>> special_list({"<s>": 300, "</s>": 301})
    ['<s>', '</s>']
    """
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts, not a str")
    if isinstance(special_tokens, Mapping):
        return list(special_tokens.keys())
    return list(special_tokens)
