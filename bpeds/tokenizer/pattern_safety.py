"""What a split pattern may cost: checked before it is compiled, timed while it matches.

A split pattern is a regular expression, and a model file carries its own, so
a file can hand bpeds any regex. Two things make a regex dangerous:

**Compiling.** The ``regex`` module expands a counted repeat into copies of
what it repeats (about 250 bytes per copy), so ``a{100000000}`` asks for
gigabytes and ``(?:(?:a{1000}){1000}){1000}`` for far more; deep nesting of
groups exhausts Python's recursion limit. :func:`check_pattern` refuses, before
compiling, a pattern that breaks any of these limits:

- at most :data:`MAX_PATTERN_LENGTH` characters;
- groups nested at most :data:`MAX_GROUP_DEPTH` deep;
- a *size* of at most :data:`MAX_PATTERN_SIZE`: each character counts 1, and a
  counted repeat ``{m}``, ``{m,n}``, ``{m,}`` or ``{,n}`` multiplies the size of
  what it repeats by its largest count (so nested repeats multiply);
- no lone surrogate (a code point U+D800..U+DFFF on its own is not text and
  could not be saved again).

The built-in patterns have sizes under a hundred; a real tokenizer's pattern
is far inside every limit. :func:`bpeds.tokenizer.pretokenize.compile_pattern` calls
:func:`check_pattern` on every pattern it compiles, so the limits hold for
patterns from files, from the command line and from code alike.

These limits read the pattern as ``regex`` is expected to, and a parser this
rich (scoped flags, verbose mode, sets, escapes) can always be read
differently somewhere. So the bound on what compiling costs does not rest on
them: :func:`probe_pattern` compiles every pattern that is not one of bpeds's
own, once per process, in a child process whose address space may grow by
at most :data:`PROBE_MEMORY` bytes (``RLIMIT_AS``, on Linux) and which may run
for at most :data:`PROBE_SECONDS`, and matches it there against a short sample
text. A pattern whose child runs out of memory, out of time or dies is
refused with :class:`PatternLimitError`; only then is it compiled in this
process.

**Matching.** A pattern with ambiguous repeats can take exponential time on a
short text: ``(?:a|aa)+$`` on forty ``a`` and a ``!`` backtracks for minutes.
No cheap test tells such a pattern from a safe one, so a pattern that is not
one of bpeds's own (:data:`bpeds.tokenizer.pretokenize.PATTERNS`, linear by design) is
matched with a time limit: :class:`TimedPattern` gives each ``findall`` over a
text of ``n`` characters :data:`MATCH_SECONDS` ``+ n *``
:data:`MATCH_SECONDS_PER_CHAR` seconds (the built-in patterns split about five
million characters a second, so the limit is about a hundred times what a
well-behaved pattern needs) and raises :class:`PatternTimeoutError` when it is
used up. Raise the two numbers (they are read at each call) to give a slow
pattern more time.

A pattern that came from a file (a model file or a counts file's header:
see :func:`bpeds.tokenizer.pretokenize.mark_from_file`) is matched with the
same limit (:func:`findall_within`) wherever bpeds matches it in this
process: training with it (``base=``, its pieces counted in worker processes
too), counting with it, a comparison's held-out text. A pattern you pass
yourself is matched without a limit when training and counting (a time limit
makes ``regex`` about four times slower).

**Coverage.** ``findall`` returns only a pattern's matches, so text a pattern
does not match (the spaces under ``\\w+``, everything under ``""``) would
vanish silently. Training refuses it (:func:`check_coverage` raises
:class:`UncoveredTextError` naming the first character left out); encoding
keeps tiktoken's semantics and drops it, with an
:class:`UncoveredTextWarning`. bpeds's own patterns match every character,
so neither check runs for them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import regex

from bpeds.errors import TokenizerError
from bpeds.tokenizer.unicode_tables import UnicodePattern

__all__ = [
    "MATCH_SECONDS",
    "MATCH_SECONDS_PER_CHAR",
    "MAX_GROUP_DEPTH",
    "MAX_PATTERN_LENGTH",
    "MAX_PATTERN_SIZE",
    "PROBE_MEMORY",
    "PROBE_SECONDS",
    "PatternLimitError",
    "PatternTimeoutError",
    "TimedPattern",
    "UncoveredTextError",
    "UncoveredTextWarning",
    "check_coverage",
    "check_pattern",
    "findall_within",
    "pattern_size",
    "probe_pattern",
]

#: The longest pattern source accepted, in characters.
MAX_PATTERN_LENGTH = 16_384
#: The deepest nesting of groups (and character sets) accepted.
MAX_GROUP_DEPTH = 64
#: The largest size (see :func:`pattern_size`) accepted: about 25 MB of compiled pattern.
MAX_PATTERN_SIZE = 100_000
#: Bytes of address space compiling and probing a pattern may add (see :func:`probe_pattern`).
PROBE_MEMORY = 256 * 2**20
#: Seconds the child process of :func:`probe_pattern` may run, its start included.
PROBE_SECONDS = 30.0
#: Seconds every :meth:`TimedPattern.findall` may take, plus :data:`MATCH_SECONDS_PER_CHAR`.
MATCH_SECONDS = 1.0
#: Seconds per character of the text a :class:`TimedPattern`'s ``findall`` may take in addition.
MATCH_SECONDS_PER_CHAR = 20e-6


class PatternLimitError(TokenizerError):
    """A split pattern exceeds a limit of :mod:`bpeds.tokenizer.pattern_safety` (a ``ValueError``).

    Raised before the pattern is compiled, so nothing was allocated for it.
    """


class PatternTimeoutError(TokenizerError):
    """Matching a split pattern took longer than its time limit (a ``ValueError``).

    The pattern backtracks catastrophically on this text (or the limit of
    :mod:`bpeds.tokenizer.pattern_safety` is too small for the machine). No result was
    produced; the tokenizer is unchanged and can encode other texts.
    """


class UncoveredTextError(TokenizerError):
    """A split pattern left characters of the training text unmatched (a ``ValueError``).

    ``findall`` returns only the matches, so such characters would be missing
    from the training data without a trace. Add an alternative that matches
    them (the built-in patterns end in ``\\s+``, and every character is a
    letter, a digit, whitespace or something else they match).
    """


class UncoveredTextWarning(UserWarning):
    """Encoding dropped characters that the split pattern does not match.

    Encoding keeps tiktoken's semantics (only the pattern's matches are
    encoded), so ``decode(encode(text))`` lacks those characters.
    """


def _first_gap(pieces: list[str], text: str) -> int:
    """The index of the first character of ``text`` that no piece covers."""
    at = 0
    for piece in pieces:
        if not text.startswith(piece, at):
            return at
        at += len(piece)
    return at


def check_coverage(pieces: list[str], text: str, source: str) -> list[str]:
    """``pieces`` (``findall(text)`` of ``source``) if they cover all of ``text``.

    Otherwise raise :class:`UncoveredTextError` naming the first character
    left out. The test is that the lengths add up: ``findall`` returns
    non-overlapping matches in order. Complexity: O(pieces).

    >>> check_coverage(["a", "b"], "a b", "[a-z]")
    Traceback (most recent call last):
    ...
    bpeds.tokenizer.pattern_safety.UncoveredTextError: the split pattern '[a-z]' does not match ...
    """
    if sum(map(len, pieces)) == len(text):
        return pieces
    at = _first_gap(pieces, text)
    raise UncoveredTextError(
        f"the split pattern {_shorten(source)} does not match {text[at]!r} at index {at} of a "
        f"text, which would be left out of training; extend the pattern (e.g. end it with "
        "|\\s+|. ) so that it matches every character"
    )


_QUANTIFIER = regex.compile(r"\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")
_VERBOSE = regex.compile(r"\(\?[a-zA-Z0-9^-]*x")
_VERSION1 = regex.compile(r"\(\?[a-zA-Z0-9^-]*V1")
# Escapes that may be followed by a braced argument (\p{L}, \N{name}, \x{41}, \g{1}).
_BRACED_ESCAPES = frozenset("pPNxgkuU")
_MAX_COUNT_DIGITS = 9


def _limit(message: str) -> PatternLimitError:
    return PatternLimitError(f"split pattern refused: {message}")


def pattern_size(source: str) -> int:
    """The size of a pattern: its characters, each counted repeat multiplying what it repeats.

    >>> pattern_size("ab"), pattern_size("a{3}b"), pattern_size("(?:a{10}){10}")
    (2, 4, 120)

    This is an upper bound of how many pieces the ``regex`` module compiles
    the pattern into (it expands counted repeats, not ``*``, ``+`` or ``?``).
    The count stops as soon as it passes :data:`MAX_PATTERN_SIZE` or the nesting
    passes :data:`MAX_GROUP_DEPTH`, raising :class:`PatternLimitError`; a
    pattern that does not parse is measured as best it can be (compiling it
    reports the syntax error). Complexity: O(len(source)).
    """
    verbose = _VERBOSE.search(source) is not None
    nested_sets = _VERSION1.search(source) is not None
    # One frame per open group: [total size so far, size of the last item].
    frames: list[list[int]] = [[0, 0]]
    i, n = 0, len(source)

    def add(item: int, *, quantifiable: bool = True) -> None:
        frame = frames[-1]
        frame[0] += item
        if quantifiable:
            frame[1] = item
        if frame[0] > MAX_PATTERN_SIZE:
            raise _limit(
                f"its size exceeds {MAX_PATTERN_SIZE} (counted repeats multiply the size "
                "of what they repeat, and compiling expands them)"
            )

    while i < n:
        c = source[i]
        if c == "\\":
            nxt = source[i + 1 : i + 2]
            i += 2
            if nxt in _BRACED_ESCAPES and source[i : i + 1] == "{":
                close = source.find("}", i)
                i = n if close < 0 else close + 1
            add(1)
        elif c == "[":
            i = _skip_set(source, i, nested_sets)
            add(1)
        elif c == "(":
            if source.startswith("(?#", i):
                close = source.find(")", i)
                i = n if close < 0 else close + 1
                continue
            frames.append([0, 0])
            if len(frames) - 1 > MAX_GROUP_DEPTH:
                raise _limit(f"its groups nest more than {MAX_GROUP_DEPTH} deep")
            i += 1
        elif c == ")":
            i += 1
            if len(frames) > 1:
                size = frames.pop()[0]
                add(max(size, 1))
            else:
                add(1)
        elif c == "{":
            m = _QUANTIFIER.match(source, i)
            if m is None or not (m[1] or m[2]):
                add(1)
                i += 1
                continue
            count = max(_count(m[1]), _count(m[2]))
            i = m.end()
            frame = frames[-1]
            last = frame[1]
            frame[1] = last * count
            add(last * (count - 1) if count else 0, quantifiable=False)
        elif verbose and c == "#":
            close = source.find("\n", i)
            i = n if close < 0 else close + 1
        elif c.isspace():
            add(1, quantifiable=False)
            i += 1
        else:
            add(1)
            i += 1
    while len(frames) > 1:  # unclosed groups: compiling reports them
        size = frames.pop()[0]
        add(size)
    return frames[0][0]


def _count(digits: str | None) -> int:
    if not digits:
        return 0
    if len(digits) > _MAX_COUNT_DIGITS:
        raise _limit(f"a repeat count of {len(digits)} digits is beyond any limit")
    return int(digits)


def _skip_set(source: str, i: int, nested: bool) -> int:
    """The index just after the character set that starts at ``source[i] == "["``."""
    n = len(source)
    depth = 0
    j = i
    while j < n:
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            if source.startswith("[:", j):  # a POSIX class [:alpha:]
                close = source.find(":]", j + 2)
                if close >= 0:
                    j = close + 2
                    continue
            if depth == 0 or nested:
                depth += 1
                if depth > MAX_GROUP_DEPTH:
                    raise _limit(f"its character sets nest more than {MAX_GROUP_DEPTH} deep")
                j += 1
                # A "]" right after "[" or "[^" is a literal member.
                if source.startswith("^", j):
                    j += 1
                if source.startswith("]", j):
                    j += 1
                continue
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def check_pattern(source: str) -> None:
    """Raise :class:`PatternLimitError` if ``source`` breaks a limit of this module.

    >>> check_pattern(r"\\p{L}+|\\p{N}{1,3}")
    >>> check_pattern("a{100000000}")
    Traceback (most recent call last):
    ...
    bpeds.tokenizer.pattern_safety.PatternLimitError: split pattern refused: its size exceeds ...

    The limits are listed in the module docstring. A value that is not a
    ``str`` raises ``TypeError``. Complexity: O(len(source)), nothing compiled.
    """
    if not isinstance(source, str):
        raise TypeError(f"a split pattern is a str, got {type(source).__name__}")
    if len(source) > MAX_PATTERN_LENGTH:
        raise _limit(
            f"it is {len(source)} characters long, more than the {MAX_PATTERN_LENGTH} allowed"
        )
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _limit(
            f"it holds the lone surrogate U+{ord(source[exc.start]):04X} at index {exc.start}, "
            "which is not text (write it as the escape \\ud800 etc. if you mean to match it)"
        ) from None
    pattern_size(source)


# The child of probe_pattern: it reads the pattern on stdin, limits its own address space to
# what it has plus PROBE_MEMORY, compiles the pattern and matches it against a sample text.
# Exit 0: fine (or a syntax error, which compiling here reports); 3: out of memory; 4: too
# deep; 5: matching the sample took too long; 6: no regex module to try it with.
_PROBE_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[3])  # where this process found regex (-I ignores PYTHONPATH)
try:
    import regex
except ImportError:
    sys.exit(6)
try:
    import resource
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * resource.getpagesize()
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    soft = size + int(sys.argv[1])
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
except (ImportError, OSError, ValueError):
    pass
source = sys.stdin.buffer.read().decode("utf-8")
sample = "Hello, world! It's 2024: 12345 caf\u00e9s \u2014 na\u00efve "
sample += "\u4e2d\u6587 \u0645\u0631\u062d\u0628\u0627.\n\t  end "
try:
    regex.compile(source).findall(sample * 4, timeout=float(sys.argv[2]))
except regex.error:
    sys.exit(0)
except MemoryError:
    sys.exit(3)
except RecursionError:
    sys.exit(4)
except TimeoutError:
    sys.exit(5)
"""

_PROBED: set[str] = set()
_REFUSED: dict[str, str] = {}  # source -> why (a child's verdict is remembered either way)


def probe_pattern(source: str) -> None:
    """Compile ``source`` in a child process with memory and time limits; refuse it if they break.

    The child (the same interpreter, started with ``-I``) may add
    :data:`PROBE_MEMORY` bytes to its address space (``RLIMIT_AS``; on
    systems without it, only the time limit holds) and run for
    :data:`PROBE_SECONDS`; it compiles the pattern and matches it against a
    sample text of a few hundred characters. If it runs out of memory, of
    recursion or of time, or dies, this raises :class:`PatternLimitError` and
    the pattern is never compiled here; a pattern that does not parse passes
    (compiling it reports the syntax error). The verdict on a source is
    remembered for the life of the process (a timeout is not: it may have
    been the machine's load). If no child can be started (``OSError``) or
    it cannot import ``regex``, only :func:`check_pattern`'s limits hold. Complexity: one
    process start (tens of milliseconds) the first time a source is seen,
    O(1) after.

    >>> probe_pattern(r"\\w+|\\s+")
    >>> probe_pattern("(?x:a)#a{10000000}")
    Traceback (most recent call last):
    ...
    bpeds.tokenizer.pattern_safety.PatternLimitError: split pattern refused: compiling it needs ...
    """
    if source in _PROBED:
        return
    if source in _REFUSED:
        raise _limit(_REFUSED[source])
    where = os.path.dirname(os.path.dirname(os.path.abspath(regex.__file__)))
    argv = [sys.executable, "-I", "-c", _PROBE_CHILD, str(PROBE_MEMORY), str(PROBE_SECONDS / 3)]
    argv.append(where)
    try:
        done = subprocess.run(
            argv,
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
            env={k: v for k, v in os.environ.items() if k in ("PATH", "SYSTEMROOT")},
        )
    except subprocess.TimeoutExpired:
        raise _limit(
            f"compiling it and matching a short sample took more than {PROBE_SECONDS:g} s"
        ) from None
    except OSError:  # no child process here: check_pattern's limits alone hold
        done = subprocess.CompletedProcess(argv, _CANNOT_TRY)
    if done.returncode in (0, _CANNOT_TRY):
        _PROBED.add(source)
        return
    _REFUSED[source] = {
        3: f"compiling it needs more than {PROBE_MEMORY >> 20} MiB of memory",
        4: "compiling it nests too deep",
        5: "matching it against a short sample text takes too long (it backtracks "
        "catastrophically)",
    }.get(done.returncode, f"compiling it failed in the process that tried it ({done.returncode})")
    raise _limit(_REFUSED[source])


_CANNOT_TRY = 6  # the child's exit status when it cannot import regex


def findall_within(
    compiled: regex.Pattern[str] | UnicodePattern,
    text: str,
    limits: tuple[float, float] | None = None,
) -> list[str]:
    """``compiled.findall(text)`` within ``seconds + per_char * len(text)`` seconds, for
    ``limits = (seconds, per_char)`` (default: :data:`MATCH_SECONDS` and
    :data:`MATCH_SECONDS_PER_CHAR` as they are now); past it, :class:`PatternTimeoutError`.

    >>> findall_within(regex.compile(r"\\w+|\\W"), "two words", (1.0, 0.0))
    ['two', ' ', 'words']

    Complexity: that of the pattern on ``text``, cut off at the limit.
    """
    seconds, per_char = (MATCH_SECONDS, MATCH_SECONDS_PER_CHAR) if limits is None else limits
    allowed = seconds + per_char * len(text)
    try:
        found: list[str] = compiled.findall(text, timeout=allowed)
    except TimeoutError:
        raise PatternTimeoutError(
            f"the split pattern {_shorten(compiled.pattern)} took more than {allowed:.2g} s on "
            f"a text of {len(text)} characters: it backtracks catastrophically (raise "
            "bpeds.tokenizer.pattern_safety.MATCH_SECONDS to give it more time)"
        ) from None
    return found


class TimedPattern:
    """A compiled pattern whose :meth:`findall` has a time limit (see the module docstring)
    and warns (:class:`UncoveredTextWarning`) when its matches leave characters out.

    >>> TimedPattern(regex.compile(r"\\w+|\\W")).findall("two words")
    ['two', ' ', 'words']

    ``pattern``, ``flags`` and ``groups`` are the compiled pattern's.
    """

    __slots__ = ("compiled", "flags", "groups", "pattern")

    def __init__(self, compiled: regex.Pattern[str] | UnicodePattern) -> None:
        self.compiled = compiled
        self.pattern = compiled.pattern
        self.flags = compiled.flags
        self.groups = compiled.groups

    def findall(self, text: str) -> list[str]:
        """``compiled.findall(text)`` within the time limit, else :class:`PatternTimeoutError`.

        Complexity: that of the pattern on ``text``, cut off at the limit.
        """
        found = findall_within(self.compiled, text)
        if sum(map(len, found)) != len(text):
            at = _first_gap(found, text)
            warnings.warn(
                f"the split pattern {_shorten(self.pattern)} does not match {text[at]!r} at "
                f"index {at}: characters it does not match are not encoded (decode(encode(text)) "
                "lacks them)",
                UncoveredTextWarning,
                stacklevel=4,
            )
        return found

    def __reduce__(
        self,
    ) -> tuple[type[TimedPattern], tuple[regex.Pattern[str] | UnicodePattern]]:
        return TimedPattern, (self.compiled,)


def _shorten(source: str) -> str:
    return repr(source) if len(source) <= 80 else repr(source[:77]) + "..."
