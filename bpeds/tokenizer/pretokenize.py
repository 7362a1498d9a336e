"""Split patterns: how text is cut into chunks that merges never cross.

The patterns are those the GPT-2 and GPT-4 (cl100k) tokenizers publish, plus
GPT-4o's (o200k). A pattern sees one *unit* of text at a time, and the result
depends on the unit: GPT-2's ``\\s+(?!\\S)`` leaves the last space of a run to
the next word only when that word is in the same unit, so splitting a file
line by line and splitting it whole give different chunks. :func:`split`
applies the pattern to exactly the string it is given.

This module is the one home of patterns: their names (:data:`PATTERNS`),
compiling (:func:`compile_pattern`, one compiled object per source and
process) and validating a tokenizer's pattern (:func:`resolve_pattern`, used by
the tokenizer and by training alike).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from typing import overload

import regex

from bpeds.errors import TokenizerError
from bpeds.tokenizer import pattern_safety
from bpeds.tokenizer.pattern_safety import check_pattern, probe_pattern
from bpeds.tokenizer.unicode_tables import UnicodePattern, check_unicode, with_tables

__all__ = [
    "GPT2_PATTERN",
    "GPT4O_PATTERN",
    "GPT4_PATTERN",
    "NEWLINE_CUT",
    "CompiledPattern",
    "PATTERNS",
    "Segmenter",
    "compile_pattern",
    "cut_points",
    "mark_from_file",
    "match_limits",
    "pattern_label",
    "resolve_pattern",
    "segmenter",
    "split",
]

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
GPT4O_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Named patterns accepted wherever a pattern is.
PATTERNS = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "gpt4o": GPT4O_PATTERN}

#: A compiled split pattern: ``regex``'s, or one reading another version's Unicode tables
#: (:mod:`bpeds.tokenizer.unicode_tables`).
CompiledPattern = regex.Pattern[str] | UnicodePattern


@overload
def compile_pattern(pattern: str, unicode: None = None) -> regex.Pattern[str]: ...
@overload
def compile_pattern(pattern: str, unicode: str | None) -> CompiledPattern: ...
def compile_pattern(pattern: str, unicode: str | None = None) -> CompiledPattern:
    """Compile a named or literal pattern; a pattern that does not compile raises ValueError.

    A pattern beyond the limits of :mod:`bpeds.tokenizer.pattern_safety` raises its
    :class:`~bpeds.tokenizer.pattern_safety.PatternLimitError` (a ``ValueError``) before
    anything is compiled in this process: a pattern that is not one of :data:`PATTERNS`
    is first compiled in a child process with memory and time limits
    (:func:`~bpeds.tokenizer.pattern_safety.probe_pattern`, once per source and process).
    ``unicode`` chooses the tables its classes are read with
    (:mod:`bpeds.tokenizer.unicode_tables`; ``None``: the ``regex`` module's own).

    >>> compile_pattern("gpt2").findall("Hello world")
    ['Hello', ' world']
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a split pattern is a str, got {type(pattern).__name__}")
    check_unicode(unicode)
    source = PATTERNS.get(pattern, pattern)
    if source not in _CACHE:
        check_pattern(source)  # limits on what compiling may cost (bpeds.tokenizer.pattern_safety)
        if source not in _BUILTIN:
            probe_pattern(source)  # what compiling costs, bounded in a child process
    try:
        return _compiled(source, unicode)
    except regex.error as exc:
        raise ValueError(f"split pattern {pattern!r} does not compile: {exc}") from None


def resolve_pattern(
    pattern: str | None, unicode: str | None = None
) -> tuple[str | None, CompiledPattern | None]:
    """The regex source of a named or literal pattern, and its compiled form (reading
    ``unicode``'s tables, see :func:`compile_pattern`).

    ``None`` stays ``None`` (no split). Names are those of :data:`PATTERNS`. A
    pattern that does not compile, or that has capturing groups (whose matches
    ``findall`` would not return whole), raises
    :class:`~bpeds.errors.TokenizerError` (a ``ValueError``); a value that is
    neither a ``str`` nor ``None`` raises ``TypeError``, as does a ``unicode`` that is
    neither; an unknown ``unicode`` raises ``ValueError``.

    >>> resolve_pattern("gpt2")[0] == PATTERNS["gpt2"]
    True
    >>> resolve_pattern(r"(\\w+)")
    Traceback (most recent call last):
    ...
    bpeds.errors.TokenizerError: split pattern '(\\\\w+)' has 1 capturing group(s): ...
    """
    check_unicode(unicode)
    if pattern is None:
        return None, None
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, got {type(pattern).__name__}")
    try:
        compiled = compile_pattern(pattern, unicode)
    except ValueError as exc:
        raise TokenizerError(str(exc)) from None
    if compiled.groups:
        raise TokenizerError(
            f"split pattern {pattern!r} has {compiled.groups} capturing group(s): a split "
            "pattern's whole matches are the pieces, so write groups as (?:...)"
        )
    return compiled.pattern, compiled


def pattern_label(source: str | None) -> str:
    """How messages name a pattern: its name if it is one of :data:`PATTERNS`, ``none``
    for no split, else its source (quoted).

    >>> pattern_label(PATTERNS["gpt2"]), pattern_label(None), pattern_label("a+")
    ('gpt2', 'none', "'a+'")
    """
    names = [n for n, s in PATTERNS.items() if s == source]
    return names[0] if names else ("none" if source is None else repr(source))


def split(
    text: str, pattern: str | CompiledPattern | None, unicode: str | None = None
) -> Iterator[bytes]:
    """UTF-8 chunks of ``text`` under ``pattern`` (``None``: the whole text, one chunk),
    a pattern given as a str read with ``unicode``'s tables (:func:`compile_pattern`).

    >>> list(split("it's ok", "gpt2"))
    [b'it', b"'s", b' ok']
    >>> list(split("\u0558's", "gpt4")), list(split("\u0558's", "gpt4", unicode="16.0"))
    ([b'\xd5\x98', b"'s"], [b"\xd5\x98'", b's'])
    """
    if pattern is None:
        if text:
            yield text.encode("utf-8")
        return
    compiled = compile_pattern(pattern, unicode) if isinstance(pattern, str) else pattern
    for piece in compiled.findall(text):
        yield piece.encode("utf-8")


# -- safe cuts -------------------------------------------------------------------------------

#: Stands for a space that must not be cut before (see :meth:`Segmenter.parts`).
GLUED = "\uffff"
# stdlib ``re``'s ``\s`` is ``str.isspace``, a superset of the ``regex`` module's ``\s``
# (it adds U+001C..U+001F), so a character that is not ``re``-whitespace is not
# ``regex``-whitespace either: every test below errs on the side of not cutting.
_UNSAFE_SPACES = re.compile(r"\s +\S?")
#: Rule 2 of :class:`Segmenter` for GPT-4o, also :mod:`bpeds.tokenizer.io`'s second streaming cut
#: point for every pattern: after a newline with a non-whitespace character on each side,
#: the next one not ``/``. Read here by the stdlib ``re`` (``\s`` is ``str.isspace``:
#: errs towards not cutting) and in :mod:`bpeds.tokenizer.io` by ``regex`` (the patterns' own
#: ``\s``); both are exact.
NEWLINE_CUT = r"(?<=\S\n)(?=[^\s/])"
#: The patterns the cut rules are proven for, each with its rule-2 cut (GPT-2 and GPT-4
#: may also cut before a ``/``).
_ANY_NEWLINE_CUT = re.compile(r"(?<=\S\n)(?=\S)")
_PROVEN = {
    GPT2_PATTERN: _ANY_NEWLINE_CUT,
    GPT4_PATTERN: _ANY_NEWLINE_CUT,
    GPT4O_PATTERN: re.compile(NEWLINE_CUT),
}


def cut_points(pattern: str) -> str | None:
    """A zero-width ``regex`` source matching every rule-1, 2 and 3 cut point of
    :class:`Segmenter` for ``pattern`` (a regex source), or ``None`` for a pattern
    the rules are not proven for.

    Written with the patterns' own ``\\s`` (``regex``'s), so it is exact; it may be
    searched forwards or, with ``(?r)``, backwards.

    >>> import regex
    >>> [m.start() for m in regex.finditer(cut_points(GPT2_PATTERN), "a b  c\\nd")]
    [1, 3, 4, 7]
    """
    newline = _PROVEN.get(pattern)
    if newline is None:
        return None
    after_newline = r"(?<=\S\n)(?=\S)" if newline is _ANY_NEWLINE_CUT else NEWLINE_CUT
    return r"(?<=\S)(?= )|(?= \S)|" + after_newline


def _glue(m: re.Match[str]) -> str:
    # m[0]: a whitespace character, a run of spaces, and the next character if it is not
    # whitespace. Every space of the run is glued except, before such a character, the last.
    run = m[0]
    if run[-1] == " ":
        return run[0] + GLUED * (len(run) - 1)
    return run[0] + GLUED * (len(run) - 3) + run[-2:]


class Segmenter:
    """Cuts text where cutting provably cannot change the split of a built-in pattern.

    For the GPT-2, GPT-4 and GPT-4o patterns (only those: see :func:`segmenter`)
    ``findall(A + B) == findall(A) + findall(B)`` whenever the cut between
    ``A`` and ``B`` is

    1. before a space (U+0020) whose preceding character is not whitespace,
    3. before a space whose following character is not whitespace, or
    2. after a newline whose preceding character is not whitespace and whose
       following character is not whitespace (and, for GPT-4o, not ``/``).

    *Proof.* The patterns have no lookbehind, anchor or backreference, so a
    match attempt at a position of ``B`` sees the same characters in ``A + B``
    as in ``B``. No alternative matches the empty string, so ``findall`` resumes
    at each match's end. It remains to show that an attempt starting in ``A``
    behaves the same when the cut is followed by ``B`` as at the end of the
    string: then it never runs past the cut and the scan reaches the cut in
    both texts. An attempt only differs if some test at the cut position
    succeeds on ``B``'s first character, or the lookahead ``(?!\\S)`` (true for
    a space and at the end) reads it.

    Rule 1, ``B`` starts with a space. The tests that accept a space are
    ``\\s`` (in ``\\s+``, ``\\s*``), the optional `` ?`` and
    ``[^\\r\\n\\p{L}\\p{N}]?``. The last two begin their alternative, so
    they are tried at the attempt's start, which is inside ``A``. The ``\\s``
    items begin their alternative and are preceded only by ``\\s`` items, so
    they reach the cut only after matching whitespace up to it, but the
    character before the cut is not whitespace. Every other test (letters,
    digits, ``[^\\s\\p{L}\\p{N}]``, the ``[\\r\\n]*``/``[\\r\\n/]*`` tails,
    the contraction suffixes) fails on a space as at the end.

    Rule 3, ``B`` is a space then ``x`` (not whitespace), ``A`` may end in
    whitespace. Now ``\\s`` items started in a whitespace run of ``A`` can
    reach the cut; everything else is as in rule 1. ``\\s+(?!\\S)`` takes the
    space, fails its lookahead on ``x``, backs off one character and ends at
    the cut (the lookahead sees the space), exactly where it ends at the end
    of ``A``. ``\\s*[\\r\\n]`` (``[\\r\\n]+``) fails on ``x`` and on the space,
    then backs off into ``A`` as it does at the end. The alternatives tried
    before these (`` ?``, ``[^\\r\\n\\p{L}\\p{N}]?+`` then a letter, digit or
    punctuation) fail on the whitespace or space after their first character
    as at the end.

    Rule 2, ``A`` ends with ``c\\n`` (``c`` not whitespace), ``B`` starts with
    ``x`` (not whitespace). A test at the cut comes after the attempt matched
    the newline, by a ``[\\r\\n]*`` tail after punctuation (then it tests
    ``[\\r\\n]`` on ``x``: fails, as at the end; GPT-4o's ``[\\r\\n/]*``
    accepts ``x == "/"``, hence the exception), or by whitespace items starting
    at the newline itself (they cannot start earlier: ``c``). There, GPT-4's
    and GPT-4o's ``\\s*[\\r\\n]`` / ``\\s*[\\r\\n]+`` come first and match
    exactly ``"\\n"`` either way (their tests on ``x`` fail as at the end).
    GPT-2 reaches ``\\s+(?!\\S)``: it matches ``"\\n"`` at the end but fails
    before ``x``, and then ``\\s+`` matches ``"\\n"``; ``findall`` returns the
    same span either way.

    Where cutting fails: before a space with whitespace on both sides (GPT-2
    splits ``"a\\n  b"`` into ``a, "\\n ", " b"`` but ``"a\\n"`` + ``"  b"`` into
    ``a, "\\n", " ", " b"``; GPT-4's ``\\s*[\\r\\n]`` takes ``"  \\n"`` whole), after
    a newline between whitespace (``\\s+(?!\\S)`` backs off one character), and
    for GPT-4o before ``/`` after a newline (``".\\n/"`` is one piece).
    Custom patterns get no segmenter: a pattern like ``\\w+ `` breaks rule 1.

    >>> seg = segmenter("gpt2")
    >>> seg.parts("a b   c")
    ['a', 'b', '\\uffff', 'c']
    >>> seg.cuts(" end.\\nNext\\n\\nx")
    [' end.\\n', 'Next\\n\\nx']
    >>> seg.count("the cat\\nthe cat") == dict(Counter(seg.findall("the cat\\nthe cat")))
    True
    """

    __slots__ = ("_newline_cuts", "findall")

    def __init__(self, compiled: CompiledPattern) -> None:
        self.findall = compiled.findall
        self._newline_cuts = _PROVEN[compiled.pattern]

    @staticmethod
    def parts(text: str) -> list[str] | None:
        """``text`` cut before every rule-1/3 space; ``None`` if ``text`` holds :data:`GLUED`.

        Part ``0`` is the text before the first cut; every later part ``p``
        stands for ``" " + p``. A space that may not be cut before is written
        :data:`GLUED` inside a part (:func:`restore` undoes it). C-speed
        (``re.sub`` over the few unsafe spaces, then ``str.split``); O(len(text)).
        """
        if GLUED in text:
            return None
        return _UNSAFE_SPACES.sub(_glue, text).split(" ")

    def cuts(self, text: str) -> list[str]:
        """``text`` cut after every rule-2 newline (``text`` is returned whole if it has none).

        O(len(text)), in C (``re.split`` on the pattern's rule-2 cut).
        """
        if "\n" not in text:
            return [text]
        return self._newline_cuts.split(text)

    def count(self, text: str) -> dict[str, int]:
        """``dict(Counter(findall(text)))``, in order of first appearance, faster.

        Counts the parts at C speed, then cuts and splits each *distinct*
        part once and multiplies. O(len(text)) C-level work plus
        O(total length of the distinct parts) Python-level work. Text that
        does not look like space-separated, mostly ASCII text is split whole.
        """
        if not _pays_off(text):
            return dict(Counter(self.findall(text)))
        return self.count_cut(text)

    def segments(self, text: str) -> list[str]:
        """``text`` cut at every rule-1, 2 and 3 point: ``"".join`` of it is ``text``.

        Splitting each segment gives ``findall(text)`` in order. O(len(text)).
        """
        parts = self.parts(text)
        if parts is None:
            return [text] if text else []
        out = self.cuts(restore(parts[0])) if parts[0] else []
        for part in islice(parts, 1, None):
            out += self.cuts(" " + restore(part))
        return out

    def count_cut(self, text: str) -> dict[str, int]:
        """:meth:`count` without the check that cutting pays off (always cuts)."""
        parts = self.parts(text)
        if parts is None:
            return dict(Counter(self.findall(text)))
        whole: dict[str, int] = {}
        get = whole.get
        for seg in self.cuts(restore(parts[0])):
            whole[seg] = get(seg, 0) + 1
        for part, c in Counter(islice(parts, 1, None)).items():
            seg = " " + part if GLUED not in part else " " + restore(part)
            if "\n" in seg:
                for sub in self.cuts(seg):
                    whole[sub] = get(sub, 0) + c
            else:
                whole[seg] = get(seg, 0) + c
        out: dict[str, int] = {}
        oget = out.get
        for pieces, c in zip(map(self.findall, whole), whole.values(), strict=True):
            for p in pieces:
                out[p] = oget(p, 0) + c
        return out


def _pays_off(text: str) -> bool:
    """Whether cutting ``text`` is likely faster than splitting it whole (a 64 KiB sample).

    Measured per ~1 MB of multi_mix.txt: without spaces (CJK, code) or outside
    ASCII (Cyrillic, spaced Han) distinct parts are 30-50% of all parts and
    cutting was up to 1.4x slower; on English (10% distinct) 1.15x faster.
    """
    sample = text[: 1 << 16]
    n = len(sample)
    return 8 * sample.count(" ") >= n and len(sample.encode("utf-8", "surrogatepass")) <= 1.1 * n


def restore(part: str) -> str:
    """A part of :meth:`Segmenter.parts` with its glued spaces written as spaces again."""
    return part.replace(GLUED, " ")


def segmenter(pattern: str | CompiledPattern | None) -> Segmenter | None:
    """A :class:`Segmenter` for the GPT-2, GPT-4 and GPT-4o patterns, else ``None``.

    A compiled pattern qualifies only with its source unchanged and no flags
    beyond the defaults.

    >>> segmenter("gpt4") is not None, segmenter(r"\\S+|\\s+")
    (True, None)
    """
    if pattern is None:
        return None
    if isinstance(pattern, str):
        source = PATTERNS.get(pattern, pattern)
        if source not in _PROVEN:
            return None
        return Segmenter(_compiled(source))
    if pattern.pattern not in _PROVEN or pattern.flags != _compiled(pattern.pattern).flags:
        return None
    return Segmenter(pattern)


_CACHE: dict[str, regex.Pattern[str]] = {}
_TABLE_CACHE: dict[tuple[str, str], CompiledPattern] = {}
_BUILTIN = frozenset(PATTERNS.values())


def _compiled(source: str, unicode: str | None = None) -> CompiledPattern:
    """``regex.compile(source)``, compiled once per process (training's workers too), read
    with ``unicode``'s tables (:func:`~bpeds.tokenizer.unicode_tables.with_tables`)."""
    rx = _CACHE.get(source)
    if rx is None:
        rx = _CACHE[source] = regex.compile(source)
    if unicode is None:
        return rx
    key = (source, unicode)
    table = _TABLE_CACHE.get(key)
    if table is None:
        table = _TABLE_CACHE[key] = with_tables(rx, unicode)
    return table


_FROM_FILES: set[str] = set()


def mark_from_file(source: str | None) -> None:
    """Remember that ``source`` came from a file (a model file, a counts file's header):
    :func:`match_limits` gives it a time limit from now on in this process, so training,
    counting and comparing with it are cut off as encoding is (see
    :mod:`bpeds.tokenizer.pattern_safety`). bpeds's own patterns and ``None`` are
    ignored. O(1).
    """
    if source is not None and source not in _BUILTIN:
        _FROM_FILES.add(source)


def match_limits(source: str | None) -> tuple[float, float] | None:
    """The time limit ``source`` is matched with: ``(MATCH_SECONDS, MATCH_SECONDS_PER_CHAR)``
    of :mod:`bpeds.tokenizer.pattern_safety` as they are now if ``source`` came from a file
    (:func:`mark_from_file`), else ``None`` (matched without a limit). O(1).

    >>> match_limits(r"\\w+|\\W") is None
    True
    """
    if source in _FROM_FILES:
        return pattern_safety.MATCH_SECONDS, pattern_safety.MATCH_SECONDS_PER_CHAR
    return None
