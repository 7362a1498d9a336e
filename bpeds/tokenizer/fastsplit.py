"""An exact split at the standard library's speed on ASCII text.

The ``regex`` module is needed for the patterns' Unicode classes (``\\p{L}``,
``\\p{N}``), but on ASCII text every such class is just a set of ASCII
characters, and the standard library's ``re`` (which has possessive
quantifiers and atomic groups from Python 3.11) splits ASCII text with the
*narrowed* pattern faster (``docs/performance.md`` has the measurements).
:class:`FastSplit` gives exactly ``regex``'s ``findall`` of the real pattern,
piece for piece, on any text:

- **ASCII text** is split by the narrowed pattern (:func:`narrow`);
- **mixed text** is cut where cutting provably cannot change the split (the
  cut rules of :class:`bpeds.tokenizer.pretokenize.Segmenter`), so that each non-ASCII
  character lies in an *island* from the last cut before it to the first cut
  after it; islands go to ``regex``, the ASCII stretches between them to
  ``re``. Text with many runs of non-ASCII characters (most non-English
  text) is split whole by ``regex``: there the fast path would not pay.

**The narrowing rule.** Every *atom* of the pattern (a literal character, a
class escape such as ``\\s`` or ``\\p{L}``, a bracket set, ``.``) is replaced
by the explicit set of ASCII characters that ``regex`` matches with it under
the scoped flags in force there (``regex`` itself is asked, once per atom and
character, so no table of Unicode properties is written by hand); the
structure (alternation, ``(?:...)``, atomic groups, lookaheads, greedy, lazy
and possessive quantifiers) is copied, and the scoped flags are dropped (the
sets already say what they match). Both engines are backtracking matchers
with the same semantics for that structure, and on ASCII text each narrowed
atom accepts exactly the characters the original accepts, so every match
attempt takes the same steps. This removes the differences between the
engines: ``re``'s ``\\s`` is ``str.isspace`` (it adds U+001C..U+001F, which
``regex`` does not count as whitespace) and its case-insensitive ``s``/``k``
also match U+017F/U+212A (long s, Kelvin sign); the explicit sets have neither.

**Which patterns qualify.** :func:`narrow` accepts a pattern made of the
constructs above, compiled with the default flags, with no capturing group,
backreference, lookbehind, anchor (``^``, ``$``, ``\\b``, ...), inline
global flag, conditional or fuzzy match, and none of whose matches can be
empty; it returns ``None`` for anything else (and then :func:`fast_findall`
is the plain ``regex`` ``findall``). A qualifying pattern gets the fast path
on *texts that are all ASCII*. Mixed text also needs cut rules, which are
proven only for the GPT-2, GPT-4 and GPT-4o patterns (a custom pattern with
the same source counts as that pattern); a custom pattern splits mixed text
with ``regex`` whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import regex

from bpeds.tokenizer.pretokenize import CompiledPattern, cut_points

__all__ = ["FastSplit", "fast_findall", "narrow", "splitter"]

#: Every ASCII character, in order.
_ASCII = [chr(i) for i in range(128)]
#: A set no ASCII character is in (an atom with no ASCII member).
_NO_ASCII = r"[^\x00-\x7f]"
_DEFAULT_FLAGS = regex.compile("").flags
_SCOPED_FLAGS = frozenset("ims")
_CLASS_ESCAPES = frozenset("sSdDwWtnrfv")
_QUANTIFIER = re.compile(r"(?:[*+?]|\{(?:\d+|\d+,\d*|,\d+)\})[?+]?")
_SCOPED = re.compile(r"\(\?([a-z]*)(?:-([a-z]+))?:")


class _UnsupportedError(Exception):
    """The pattern uses a construct the narrowing does not handle."""


def _render(chars: list[str]) -> str:
    """A ``re`` class matching exactly ``chars`` (ASCII, sorted) on ASCII text."""
    if not chars:
        return _NO_ASCII

    def one(c: str) -> str:
        return c if c.isalnum() else f"\\x{ord(c):02x}"

    runs: list[str] = []
    i = 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and ord(chars[j + 1]) == ord(chars[j]) + 1:
            j += 1
        if j - i >= 2:
            runs.append(f"{one(chars[i])}-{one(chars[j])}")
        else:
            runs.extend(one(c) for c in chars[i : j + 1])
        i = j + 1
    body = "".join(runs)
    return body if len(chars) == 1 else f"[{body}]"


class _Narrower:
    """Recursive descent over the supported subset of ``regex`` syntax.

    Each ``_alternation``/``_sequence``/``_item`` returns the narrowed source
    and whether the construct can match the empty string.
    """

    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def run(self) -> str:
        out, nullable = self._alternation(frozenset())
        if self.i != len(self.s):
            raise _UnsupportedError(f"unbalanced ')' at {self.i}")
        if nullable:
            raise _UnsupportedError("the pattern can match the empty string")
        return out

    def _alternation(self, flags: frozenset[str]) -> tuple[str, bool]:
        branches = [self._sequence(flags)]
        while self.i < len(self.s) and self.s[self.i] == "|":
            self.i += 1
            branches.append(self._sequence(flags))
        return "|".join(b for b, _ in branches), any(n for _, n in branches)

    def _sequence(self, flags: frozenset[str]) -> tuple[str, bool]:
        parts: list[str] = []
        nullable = True
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            text, item_nullable = self._item(flags)
            parts.append(text)
            nullable = nullable and item_nullable
        return "".join(parts), nullable

    def _item(self, flags: frozenset[str]) -> tuple[str, bool]:
        s = self.s
        c = s[self.i]
        if c == "(":
            text, nullable = self._group(flags)
        elif c in "^$":
            raise _UnsupportedError(f"anchor {c!r}")
        elif c in "*+?{":
            raise _UnsupportedError(f"{c!r} with nothing to repeat, or a literal brace")
        else:
            text, nullable = self._atom(flags), False
        m = _QUANTIFIER.match(s, self.i)
        if m is not None:
            q = m[0]
            self.i = m.end()
            if q[0] in "*?" or q.startswith(("{0", "{,")):
                nullable = True
            text += q  # an atom renders as one item (a character, a set, an escape)
        elif self.i < len(s) and s[self.i] == "{":
            raise _UnsupportedError("a brace that is not a quantifier")
        return text, nullable

    def _group(self, flags: frozenset[str]) -> tuple[str, bool]:
        s = self.s
        start = self.i
        if not s.startswith("(?", start):
            raise _UnsupportedError("capturing group")
        head = s[start + 2 : start + 3]
        if head in (":", ">", "=", "!"):
            self.i = start + 3
            opener = "(?:" if head == ":" else f"(?{head}"
            inner_flags = flags
        else:
            m = _SCOPED.match(s, start)
            if m is None or (not m[1] and not m[2]):
                raise _UnsupportedError(f"group {s[start : start + 4]!r}")
            on, off = set(m[1]), set(m[2] or "")
            if not (on | off) <= _SCOPED_FLAGS:
                raise _UnsupportedError(f"scoped flags {m[0]!r}")
            self.i = m.end()
            opener = "(?:"
            inner_flags = frozenset((flags | on) - off)
        inner, nullable = self._alternation(inner_flags)
        if self.i >= len(s) or s[self.i] != ")":
            raise _UnsupportedError("unclosed group")
        self.i += 1
        if head in ("=", "!"):
            nullable = True  # zero-width
        return f"{opener}{inner})", nullable

    def _atom(self, flags: frozenset[str]) -> str:
        s = self.s
        start = self.i
        c = s[start]
        if c == "\\":
            self.i = self._escape_end(start)
        elif c == "[":
            self.i = self._set_end(start)
        else:
            self.i = start + 1
        atom = s[start : self.i]
        scoped = f"(?{''.join(sorted(flags))}:{atom})" if flags else atom
        try:
            rx = regex.compile(scoped)
        except regex.error as exc:
            raise _UnsupportedError(f"atom {atom!r}: {exc}") from None
        return _render([ch for ch in _ASCII if rx.fullmatch(ch)])

    def _escape_end(self, start: int) -> int:
        s = self.s
        if start + 1 >= len(s):
            raise _UnsupportedError("trailing backslash")
        e = s[start + 1]
        if e in "pPN" and s.startswith("{", start + 2):
            close = s.find("}", start + 3)
            if close < 0:
                raise _UnsupportedError("unclosed \\p{...}")
            return close + 1
        if e in "pP":
            return start + 3
        if e == "x":
            if s.startswith("{", start + 2):
                close = s.find("}", start + 3)
                if close < 0:
                    raise _UnsupportedError("unclosed \\x{...}")
                return close + 1
            return start + 4
        if e == "u":
            return start + 6
        if e == "U":
            return start + 10
        if e in _CLASS_ESCAPES or not e.isalnum():
            return start + 2
        raise _UnsupportedError(f"escape \\{e}")

    def _set_end(self, start: int) -> int:
        s = self.s
        i = start + 1
        if i < len(s) and s[i] == "^":
            i += 1
        if i < len(s) and s[i] == "]":
            raise _UnsupportedError("a set starting with ']'")
        while i < len(s):
            c = s[i]
            if c == "]":
                return i + 1
            if c == "[":
                raise _UnsupportedError("a '[' inside a set (nested set or POSIX class)")
            i = self._escape_end(i) if c == "\\" else i + 1
        raise _UnsupportedError("unclosed set")


def narrow(pattern: str | CompiledPattern) -> re.Pattern[str] | None:
    """The pattern narrowed to ASCII, compiled by ``re``, or ``None`` if it does not qualify.

    On every ASCII string ``s``, ``narrow(p).findall(s) == regex.findall(p, s)``
    (see the module docstring for the rule and which patterns qualify).

    >>> print(narrow(r"'(?i:[st])| ?\\p{L}+|\\s+(?!\\S)").pattern)
    \\x27(?:[STst])|\\x20?[A-Za-z]+|[\\x09-\\x0d\\x20]+(?![\\x00-\\x08\\x0e-\\x1f\\x21-\\x7f])
    >>> narrow(r"(\\w+)") is None, narrow(r"a*") is None, narrow(r"\\bx") is None
    (True, True, True)

    Cost: one ``regex`` compile per atom and 128 ``fullmatch`` calls each; the
    result is cached per source and flags.
    """
    if isinstance(pattern, str):
        source, flags = pattern, _DEFAULT_FLAGS
    else:
        source, flags = pattern.pattern, pattern.flags
    key = (source, flags)
    if key not in _NARROWED:
        _NARROWED[key] = _narrow(source, flags)
    return _NARROWED[key]


_NARROWED: dict[tuple[str, int], re.Pattern[str] | None] = {}


def _narrow(source: str, flags: int) -> re.Pattern[str] | None:
    if flags != _DEFAULT_FLAGS:
        return None
    try:
        if regex.compile(source).flags != _DEFAULT_FLAGS:
            return None  # an inline global flag
        return re.compile(_Narrower(source).run())
    except (_UnsupportedError, regex.error, re.error, RecursionError):
        return None


# -- mixed text ---------------------------------------------------------------------------------

#: Runs of non-ASCII characters (``regex``, not ``re``: its search for a set is about ten
#: times faster here).
_NON_ASCII = regex.compile(r"[^\x00-\x7f]+")
#: An island is extended over an ASCII gap of at most this many characters to the next run
#: (one ``regex`` call instead of three calls).
ISLAND_GAP = 64
#: Mixed text is split whole by ``regex`` when it has more runs of non-ASCII characters than
#: one per this many characters (then cutting costs more than ``re`` saves: on English with
#: characters replaced at random, the two broke even at one run per 100-120 characters).
ISLAND_SPACING = 160
#: A long text's density is counted on this many slices of this many characters.
_SAMPLES = 16
_SAMPLE = 1 << 10


class FastSplit:
    """``regex``'s ``findall`` of a pattern, with ASCII stretches split by ``re``.

    ``findall(text)`` equals ``compiled.findall(text)`` for every ``str``
    (see the module docstring for why, and which patterns take the fast path;
    for the others ``findall`` *is* ``compiled.findall``).

    >>> from bpeds.tokenizer.pretokenize import compile_pattern
    >>> fs = FastSplit(compile_pattern("gpt2"))
    >>> fs.findall("Hello world, café au lait!")
    ['Hello', ' world', ',', ' café', ' au', ' lait', '!']

    Complexity: O(len(text)) C-level matching; mixed text adds O(1) Python
    steps per island of non-ASCII characters.
    """

    __slots__ = ("_cut_back", "_cut_next", "_fast", "_slow", "findall")

    findall: Callable[[str], list[str]]

    def __init__(self, compiled: CompiledPattern) -> None:
        self._slow = compiled.findall
        narrowed = narrow(compiled)
        cuts = cut_points(compiled.pattern) if narrowed is not None else None
        if narrowed is None:
            self.findall = compiled.findall
            return
        self._fast = narrowed.findall
        if cuts is None:
            self.findall = self._ascii_only
            return
        self._cut_next = regex.compile(cuts).search
        self._cut_back = regex.compile("(?r)" + cuts).search
        self.findall = self._mixed

    @property
    def ascii(self) -> bool:
        """Whether texts that are all ASCII take the ``re`` path (the pattern qualifies)."""
        return self.findall != self._slow

    @property
    def mixed(self) -> bool:
        """Whether ASCII stretches of mixed text take it too (cut rules are proven)."""
        return self.findall == self._mixed

    def applies(self, text: str) -> bool:
        """Whether :attr:`findall` splits some of ``text`` with ``re``: ``text`` is all
        ASCII, or (cut rules proven) its non-ASCII characters are not too dense.

        O(1) for ASCII text, else O(a sample of 16,384 characters) (all of a
        shorter text).
        """
        if not self.ascii:
            return False
        if text.isascii():
            return True
        return self.mixed and not _dense(text)

    def _ascii_only(self, text: str) -> list[str]:
        if text.isascii():
            return self._fast(text)
        return self._slow(text)

    def _mixed(self, text: str) -> list[str]:
        if text.isascii():
            return self._fast(text)
        if _dense(text):
            return self._slow(text)
        return self._cut_split(text, ISLAND_GAP)

    def _cut_split(self, text: str, gap: int) -> list[str]:
        """Islands by ``regex``, the ASCII stretches between them by ``re``.

        An island runs from the last cut point at or before a run of non-ASCII
        characters to the first cut point at or after it, extended over the
        following runs that start at most ``gap`` characters after its end.

        Every boundary is a cut point of the whole text, and the split of the
        text is the pieces of its parts in order: apply the cut rule at the
        last boundary, then at the one before it in the prefix, and so on.
        The prefix holds every character the rules read before a boundary,
        and after it the part reaches far enough: parts are not empty, and
        after a rule-3 cut (a space, then ``x`` not whitespace) the next
        boundary cannot be just after the space (no rule cuts before ``x``).
        O(len(text)): each search scans at most the text since the last cut.
        """
        fast, slow = self._fast, self._slow
        cut_next, cut_back = self._cut_next, self._cut_back
        n = len(text)
        out: list[str] = []
        pos = 0  # text[:pos] is split or in the pending island; pos is a cut point
        start = -1  # the pending island is text[start:pos] (none if start < 0)
        for m in _NON_ASCII.finditer(text):
            a, b = m.span()
            if b <= pos:
                continue
            if start < 0 or a - pos > gap:
                if start >= 0:
                    out += slow(text, start, pos)
                c = cut_back(text, pos, a + 1) if a > pos else None
                start = pos if c is None else c.start()
                if start > pos:
                    out += fast(text, pos, start)
            c = cut_next(text, b)
            pos = n if c is None else c.start()
        if start >= 0:
            out += slow(text, start, pos)
        if pos < n:
            out += fast(text, pos)
        return out


def _dense(text: str) -> bool:
    """Whether ``text`` has more than one run of non-ASCII characters per
    :data:`ISLAND_SPACING` characters (then cutting costs more than ``re`` saves).

    Counted on the whole of a short text, else on :data:`_SAMPLES` slices of
    :data:`_SAMPLE` characters spread evenly over it (non-ASCII text often
    comes in stretches: one slice at the start misjudges a long text).
    """
    n = len(text)
    if n <= ISLAND_SPACING:
        return False
    if n <= _SAMPLES * _SAMPLE:
        return ISLAND_SPACING * len(_NON_ASCII.findall(text)) > n
    step = n // _SAMPLES
    runs = sum(len(_NON_ASCII.findall(text, i, i + _SAMPLE)) for i in range(0, n - _SAMPLE, step))
    return ISLAND_SPACING * runs > _SAMPLES * _SAMPLE


_SPLITTERS: dict[tuple[str, int, str | None], FastSplit] = {}


def splitter(compiled: CompiledPattern) -> FastSplit:
    """The :class:`FastSplit` of ``compiled``, one per pattern and process (cached).

    >>> from bpeds.tokenizer.pretokenize import compile_pattern
    >>> splitter(compile_pattern("gpt2")).mixed, splitter(compile_pattern(r"\\w+|\\W+")).mixed
    (True, False)
    """
    key = (compiled.pattern, compiled.flags, getattr(compiled, "unicode", None))
    fs = _SPLITTERS.get(key)
    if fs is None:
        fs = _SPLITTERS[key] = FastSplit(compiled)
    return fs


def fast_findall(compiled: CompiledPattern) -> Callable[[str], list[str]]:
    """``compiled.findall``, or the same function taking the ASCII fast path.

    >>> from bpeds.tokenizer.pretokenize import compile_pattern
    >>> fast_findall(compile_pattern("gpt4"))("it's 2024")
    ['it', "'s", ' ', '202', '4']
    """
    return splitter(compiled).findall
