"""Which Unicode tables a split pattern's character classes are read with.

bpeds matches split patterns with the ``regex`` module, whose Unicode tables follow the
newest Unicode version. The engines behind tiktoken and rustbpe (Rust's ``regex``
crates, through ``fancy-regex``) and behind Hugging Face ``tokenizers`` (Oniguruma) read
``\\p{L}``, ``\\p{N}``, ``\\p{M}`` and the other general categories with the tables of
**Unicode 16.0** (probed code point by code point: tiktoken 0.14, rustbpe 0.1 and
tokenizers 0.23 read all 1,112,064 code points alike in the classes tested;
``tests/data/make_unicode_table.py`` and ``tests/test_peer_parity.py``). Where the two
differ -- code points assigned after Unicode 16.0, which the engines read as unassigned
(``Cn``), and the few whose category
changed, such as U+0295, ``Ll`` there and ``Lo`` in newer tables -- the same pattern
splits the same text differently: ``"\\u0558's"`` is ``["\\u0558", "'s"]`` for bpeds with the
``regex`` tables and ``["\\u0558'", "s"]`` for tiktoken.

A tokenizer's ``unicode`` setting chooses the tables:

- ``None``: the ``regex`` module's own tables, whatever its version (minbpe, which splits
  with ``regex`` too, reads the same);
- ``"16.0"`` (:data:`ENGINE_UNICODE`): Unicode 16.0's general categories, as tiktoken,
  rustbpe and Hugging Face read them. The ``rustbpe`` and ``hf`` presets and every
  tokenizer imported from tiktoken or Hugging Face files use it.

**How.** :func:`with_tables` wraps a compiled pattern in a :class:`UnicodePattern`. Each
code point whose category in ``regex`` differs from the table's is matched as a *stand-in*:
a code point that both ``regex`` and the table put in the table's category (U+FDD0, a
permanent noncharacter, for ``Cn``; for the others the first code point above ASCII of that
category with no case mapping). A text holding none of them is split as it is; otherwise
the pattern runs over the text with each such code point replaced by its stand-in (same
length, so the same offsets) and the pieces are cut from the original text. What this
reproduces: every general category (``\\p{L}``, ``\\p{Lu}``, ``\\p{N}``, ``\\p{M}``, ...) and
what follows from them for a code point a table calls unassigned (``\\w``, ``\\d``,
``\\p{Alphabetic}``, its script). Not reproduced: a literal or a script class naming one
of those code points, and case-insensitive matching of them (the stand-ins have no case).
Whitespace (``\\s``) is the same in all tables checked.

Cost: one scan of the text for those code points (C speed); the replacement and the
offset mapping only for texts that hold one. The tables are built once per process
(about 0.1 s).
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Iterator
from functools import cache
from typing import Any

import regex

__all__ = [
    "ENGINE_UNICODE",
    "UNICODE_VERSIONS",
    "UnicodePattern",
    "check_unicode",
    "unicode_differences",
    "with_tables",
]

#: The Unicode version whose tables tiktoken, rustbpe and Hugging Face ``tokenizers`` read.
ENGINE_UNICODE = "16.0"
#: The values of ``unicode`` other than ``None`` (the ``regex`` module's own tables).
UNICODE_VERSIONS = (ENGINE_UNICODE,)

_CATEGORIES = (
    *("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe"),
    *("Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"),
)
_SURROGATES = range(0xD800, 0xE000)
#: A permanent noncharacter: unassigned (``Cn``) in every Unicode version.
_NONCHARACTER = 0xFDD0


def check_unicode(value: object) -> str | None:
    """``value`` if it names tables bpeds has (``None`` or one of :data:`UNICODE_VERSIONS`).

    >>> check_unicode("16.0"), check_unicode(None)
    ('16.0', None)
    >>> check_unicode("15.1")
    Traceback (most recent call last):
    ...
    ValueError: unicode must be None (the regex module's tables) or '16.0', got '15.1'

    A value that is neither a ``str`` nor ``None`` raises ``TypeError``.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"unicode must be a str or None, got {type(value).__name__}")
    if value not in UNICODE_VERSIONS:
        choices = " or ".join(repr(v) for v in UNICODE_VERSIONS)
        raise ValueError(
            f"unicode must be None (the regex module's tables) or {choices}, got {value!r}"
        )
    return value


def _runs(version: str) -> Iterator[tuple[int, int, str]]:
    """``(first, last, category)`` for every run of the table of ``version``."""
    from bpeds.tokenizer import _unicode_16_0

    assert version == ENGINE_UNICODE
    starts = [(int(item[:-2], 16), item[-2:]) for item in _unicode_16_0.RUNS.split()]
    for (first, cat), (nxt, _) in zip(starts, [*starts[1:], (0x110000, "")], strict=True):
        yield first, nxt - 1, cat


@cache
def unicode_differences(version: str) -> dict[int, str]:
    """The code points whose general category in the installed ``regex`` module differs
    from Unicode ``version``'s, each with its category in ``version``.

    >>> unicode_differences("16.0")[0x0558]    # Lm in newer tables
    'Cn'
    >>> 0x41 in unicode_differences("16.0")
    False

    Surrogates are left out (text holds none). Built once per process by matching each
    run of the table against ``regex``'s category: O(1,114,112) at C speed.
    """
    check_unicode(version)
    compiled = {cat: regex.compile(rf"\p{{{cat}}}*") for cat in _CATEGORIES}
    other = {cat: regex.compile(rf"\P{{{cat}}}") for cat in _CATEGORIES}
    points = array("I", range(0x110000))
    points[_SURROGATES.start : _SURROGATES.stop] = array("I", bytes(4 * len(_SURROGATES)))
    every = points.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")
    out: dict[int, str] = {}
    for first, last, cat in _runs(version):
        if cat != "Cs" and compiled[cat].fullmatch(every, first, last + 1) is None:
            for m in other[cat].finditer(every, first, last + 1):
                out[m.start()] = cat
    return out


def _stand_in(cat: str, table: dict[int, str]) -> str:
    """A code point that ``regex`` and the table both put in ``cat``, with no case."""
    rx = regex.compile(rf"\p{{{cat}}}")
    if cat == "Cn" and rx.match(chr(_NONCHARACTER)):
        return chr(_NONCHARACTER)
    for cp in range(0x80, 0x110000):
        ch = chr(cp)
        if cp in _SURROGATES or cp in table or not rx.match(ch):
            continue
        if ch.lower() == ch.upper() == ch.casefold() == ch:
            return ch
    raise RuntimeError(f"no stand-in for category {cat}")  # pragma: no cover


@cache
def _mask(version: str) -> tuple[re.Pattern[str], dict[str, str]]:
    """A stdlib ``re`` class matching every code point :func:`unicode_differences` lists
    below U+10000 and every code point above (a candidate, checked in :attr:`replace`),
    and each listed code point's stand-in (see the module docstring).

    ``re`` compiles a set of BMP characters to a bitmap, so the scan costs about 10 ns a
    character; code points above U+FFFF are rare in most text, and a class listing them
    too would cost five times as much.
    """
    table = unicode_differences(version)
    stand_ins = {cat: _stand_in(cat, table) for cat in sorted(set(table.values()))}
    space = regex.compile(r"\s")
    replace: dict[str, str] = {}
    for cp, cat in table.items():
        ch, sub = chr(cp), stand_ins[cat]
        if bool(space.match(ch)) != bool(space.match(sub)):  # pragma: no cover - none known
            raise RuntimeError(f"U+{cp:04X} and its stand-in differ in \\s")
        replace[ch] = sub
    bmp = "".join(re.escape(chr(cp)) for cp in sorted(table) if cp < 0x10000)
    return re.compile(f"[{bmp}\U00010000-\U0010ffff]"), replace


class UnicodePattern:
    """A compiled pattern whose character classes read Unicode ``unicode``'s tables.

    >>> rx = with_tables(regex.compile(r"\\p{L}+|\\S"), "16.0")
    >>> rx.findall("a\\u0558b"), regex.findall(r"\\p{L}+|\\S", "a\\u0558b")
    (['a', '\\u0558', 'b'], ['a\\u0558b'])

    ``pattern``, ``flags`` and ``groups`` are the compiled pattern's. :meth:`findall` and
    :meth:`finditer` take ``timeout`` as ``regex``'s do. Complexity: the pattern's on the
    text, plus one scan (see the module docstring).
    """

    __slots__ = ("_find", "_replace", "compiled", "flags", "groups", "pattern", "unicode")

    def __init__(self, compiled: regex.Pattern[str], unicode: str) -> None:
        self.compiled = compiled
        self.unicode = check_unicode(unicode)
        self.pattern = compiled.pattern
        self.flags = compiled.flags
        self.groups = compiled.groups
        self._find, self._replace = _mask(unicode)

    def masked(self, text: str) -> str | None:
        """``text`` with each code point the tables disagree on replaced by its stand-in,
        or ``None`` if it holds none. O(len(text))."""
        if text.isascii():
            return None
        replace = self._replace
        if not any(ch in replace for ch in self._find.findall(text)):
            return None
        return self._find.sub(lambda m: replace.get(m[0], m[0]), text)

    def findall(
        self,
        text: str,
        pos: int | None = None,
        endpos: int | None = None,
        *,
        timeout: float | None = None,
    ) -> list[str]:
        """The pattern's matches in ``text``, classes read with this object's tables.

        ``pos``/``endpos`` split ``text[pos:endpos]`` as a string of its own (``regex``
        lets a lookbehind see before ``pos``; the patterns that are split in stretches,
        GPT-2's, GPT-4's and GPT-4o's, have none).
        """
        if pos is not None or endpos is not None:
            text = text[pos:endpos]
        masked = self.masked(text)
        if masked is None:
            found: list[str] = self.compiled.findall(text, timeout=timeout)
            return found
        pieces: list[str] = self.compiled.findall(masked, timeout=timeout)
        if sum(map(len, pieces)) == len(text):  # the matches cover the text: cut by lengths
            out: list[str] = []
            at = 0
            for p in pieces:
                out.append(text[at : at + len(p)])
                at += len(p)
            return out
        return [text[m.start() : m.end()] for m in self.compiled.finditer(masked, timeout=timeout)]

    def finditer(self, text: str, *, timeout: float | None = None) -> Iterator[Any]:
        """Matches as ``regex`` match objects over the text the pattern ran on (the masked
        text where it differs): use their spans, which are the original text's."""
        masked = self.masked(text)
        return self.compiled.finditer(text if masked is None else masked, timeout=timeout)

    def __reduce__(self) -> tuple[type[UnicodePattern], tuple[regex.Pattern[str], str]]:
        assert self.unicode is not None
        return UnicodePattern, (self.compiled, self.unicode)

    def __repr__(self) -> str:
        return f"UnicodePattern({self.compiled!r}, {self.unicode!r})"


def with_tables(
    compiled: regex.Pattern[str], unicode: str | None
) -> regex.Pattern[str] | UnicodePattern:
    """``compiled`` itself for the ``regex`` module's tables (``None``), else a
    :class:`UnicodePattern` reading Unicode ``unicode``'s.

    >>> with_tables(regex.compile("a"), None) == regex.compile("a")
    True
    """
    if check_unicode(unicode) is None:
        return compiled
    return UnicodePattern(compiled, unicode)  # type: ignore[arg-type]
