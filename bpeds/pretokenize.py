"""Split patterns: how text is cut into chunks that merges never cross.

The patterns are those the GPT-2 and GPT-4 (cl100k) tokenizers publish, plus
GPT-4o's (o200k). A pattern sees one *unit* of text at a time, and the result
depends on the unit: GPT-2's ``\\s+(?!\\S)`` leaves the last space of a run to
the next word only when that word is in the same unit, so splitting a file
line by line and splitting it whole give different chunks. :func:`split`
applies the pattern to exactly the string it is given.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

__all__ = ["GPT2_PATTERN", "GPT4O_PATTERN", "GPT4_PATTERN", "PATTERNS", "compile_pattern", "split"]

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


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile a named or literal pattern; a pattern that does not compile raises ValueError.

    >>> compile_pattern("gpt2").findall("Hello world")
    ['Hello', ' world']
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a split pattern is a str, got {type(pattern).__name__}")
    source = PATTERNS.get(pattern, pattern)
    try:
        return regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"split pattern {pattern!r} does not compile: {exc}") from None


def split(text: str, pattern: str | regex.Pattern[str] | None) -> Iterator[bytes]:
    """UTF-8 chunks of ``text`` under ``pattern`` (``None``: the whole text, one chunk).

    >>> list(split("it's ok", "gpt2"))
    [b'it', b"'s", b' ok']
    """
    if pattern is None:
        if text:
            yield text.encode("utf-8")
        return
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    for piece in compiled.findall(text):
        yield piece.encode("utf-8")
