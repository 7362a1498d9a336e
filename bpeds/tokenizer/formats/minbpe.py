"""minbpe's files: the machine-readable ``.model`` and the human-readable ``.vocab``.

A ``.model`` file (what minbpe's ``Tokenizer.save``/``load`` read and write) is
UTF-8 text, one item per line::

    minbpe v1
    <the split pattern's regex source; an empty line for no split>
    <number of special tokens>
    <special text> <id>        (one line per special token)
    <left id> <right id>       (one line per merge; merge k makes id 256 + k)

The ``.vocab`` file is for people only: one line per token, ``[rendered] id``
for bytes and special tokens, ``[left][right] -> [token] id`` for merges,
where a rendering decodes UTF-8 with U+FFFD for invalid bytes and escapes
control characters as ``\\uXXXX``. It is lossy and never read back.

What the format cannot hold, and is therefore refused on writing with a
:class:`~bpeds.tokenizer.formats.FormatError` (minbpe would read it back differently):
a pattern with a line break or with leading/trailing whitespace (minbpe
strips each line), an empty pattern (it reads back as "no split"), and a
special token containing whitespace (minbpe splits the line on it). Not kept
at all: the training options (:attr:`~bpeds.tokenizer.Tokenizer.options`).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.files import write_files
from bpeds.tokenizer.formats._common import (
    FormatError,
    PathLike,
    build_tokenizer,
    decode_utf8,
    read_bytes,
    refuse_normalizer,
    refuse_own_ids,
    refuse_replay,
)
from bpeds.tokenizer.limits import short_repr
from bpeds.tokenizer.pretokenize import PATTERNS

__all__ = [
    "MINBPE_VERSION",
    "load_minbpe",
    "minbpe_model_text",
    "minbpe_paths",
    "minbpe_vocab_text",
    "parse_minbpe_model",
    "render_token",
    "save_minbpe",
]

#: The first line of every minbpe ``.model`` file.
MINBPE_VERSION = "minbpe v1"

_MAX_DIGITS = 18


def _check_writable(tok: Tokenizer) -> None:
    pattern = tok.pattern
    if pattern is not None:
        if "\n" in pattern or "\r" in pattern:
            raise FormatError(
                "the split pattern holds a line break, which a minbpe .model file cannot "
                "hold (it stores the pattern on one line); write it as \\n or \\r instead"
            )
        if pattern != pattern.strip():
            raise FormatError(
                "the split pattern starts or ends with whitespace, which minbpe strips when "
                "it reads a .model file; wrap it as (?:...) to keep it"
            )
        if not pattern:
            raise FormatError(
                "an empty split pattern reads back from a minbpe .model file as 'no split' "
                "(pattern=None)"
            )
    for text in tok.special_tokens:
        if any(ch.isspace() for ch in text):
            raise FormatError(
                f"special token {short_repr(text)} contains whitespace, which a minbpe .model file "
                "cannot hold (each special token line is split on whitespace)"
            )


def minbpe_model_text(tok: Tokenizer) -> str:
    """The ``.model`` file of ``tok`` as a string.

    >>> tok = Tokenizer([(97, 97), (256, 98)], pattern=None, special_tokens={"<|end|>": 258})
    >>> print(minbpe_model_text(tok), end="")
    minbpe v1
    <BLANKLINE>
    1
    <|end|> 258
    97 97
    256 98

    Special tokens are written in id order. Raises :class:`FormatError` for what
    the format cannot hold (see the module docstring). Complexity: O(merges).
    """
    refuse_replay(tok, "a minbpe .model")
    refuse_normalizer(tok, "a minbpe .model")
    refuse_own_ids(tok, "a minbpe .model")
    _check_writable(tok)
    lines = [MINBPE_VERSION, tok.pattern or ""]
    specials = sorted(tok.special_tokens.items(), key=lambda item: item[1])
    lines.append(str(len(specials)))
    lines += [f"{text} {i}" for text, i in specials]
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"


def render_token(token: bytes) -> str:
    """A token for people: UTF-8 with U+FFFD for invalid bytes, control characters escaped.

    >>> render_token(b"a\\n\\xff")
    'a\\\\u000a\\ufffd'

    Complexity: O(len(token)).
    """
    text = token.decode("utf-8", errors="replace")
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("C") else ch for ch in text
    )


def minbpe_vocab_text(tok: Tokenizer) -> str:
    """The human-readable ``.vocab`` file of ``tok`` (lossy; never read back).

    >>> tok = Tokenizer([(97, 97)], pattern=None, special_tokens={"<|end|>": 257})
    >>> lines = minbpe_vocab_text(tok).splitlines()
    >>> lines[9:11] + lines[97:98] + lines[128:129]
    ['[\\\\u0009] 9', '[\\\\u000a] 10', '[a] 97', '[\ufffd] 128']
    >>> lines[-2:]
    ['[a][a] -> [aa] 256', '[<|end|>] 257']

    Bytes 0x80..0xFF on their own are not UTF-8, so they render as U+FFFD.
    Complexity: O(total bytes of
    all tokens).
    """
    token_bytes = tok.token_bytes
    lines = [f"[{render_token(bytes((b,)))}] {b}" for b in range(256)]
    for k, (a, b) in enumerate(tok.merges):
        new = 256 + k
        lines.append(
            f"[{render_token(token_bytes(a))}][{render_token(token_bytes(b))}]"
            f" -> [{render_token(token_bytes(new))}] {new}"
        )
    for text, i in sorted(tok.special_tokens.items(), key=lambda item: item[1]):
        lines.append(f"[{render_token(text.encode('utf-8'))}] {i}")
    return "\n".join(lines) + "\n"


def minbpe_paths(file_prefix: PathLike) -> tuple[Path, Path]:
    """The ``.model`` and ``.vocab`` paths :func:`save_minbpe` writes for ``file_prefix``.

    >>> [p.name for p in minbpe_paths("toy")], [p.name for p in minbpe_paths("toy.model")]
    (['toy.model', 'toy.vocab'], ['toy.model', 'toy.vocab'])
    """
    p = Path(file_prefix)
    prefix = p.with_suffix("") if p.suffix == ".model" else p
    return prefix.with_name(prefix.name + ".model"), prefix.with_name(prefix.name + ".vocab")


def save_minbpe(
    tok: Tokenizer, file_prefix: PathLike, *, overwrite: bool = False
) -> tuple[Path, Path]:
    """Write ``<file_prefix>.model`` and ``<file_prefix>.vocab``, as minbpe's ``save`` does.

    A trailing ``.model`` on ``file_prefix`` is dropped, so ``"toy"`` and
    ``"toy.model"`` both write ``toy.model`` and ``toy.vocab``. Both files are
    written atomically; unless ``overwrite``, an existing one raises
    ``FileExistsError`` before either is written. Returns the two paths.
    Raises :class:`FormatError` for what the format cannot hold.
    Complexity: O(total bytes of all tokens).
    """
    model_path, vocab_path = minbpe_paths(file_prefix)
    model = minbpe_model_text(tok).encode("utf-8")
    vocab = minbpe_vocab_text(tok).encode("utf-8")
    write_files([(model_path, model), (vocab_path, vocab)], overwrite=overwrite)
    return model_path, vocab_path


def _int_field(text: str, where: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise FormatError(f"{where}: {what} must be a non-negative integer, got {short_repr(text)}")
    if len(text) > _MAX_DIGITS:
        raise FormatError(f"{where}: {what} {text[:20]}... is implausibly large")
    return int(text)


def parse_minbpe_model(text: str, *, source: str = "<string>") -> Tokenizer:
    """A tokenizer from the text of a minbpe ``.model`` file.

    >>> tok = parse_minbpe_model("minbpe v1\\n\\n0\\n97 97\\n256 97\\n")
    >>> tok.token_bytes(257), tok.pattern
    (b'aaa', None)

    Every line is checked; a wrong version line, a count that is not a number,
    a truncated special-token section, a malformed merge line, a merge that
    uses an id not made yet, a repeated merge or special token, or a special
    id that collides raises :class:`FormatError` naming ``source`` and the
    line. Lines are split as minbpe reads them (any line ending; fields
    stripped of surrounding whitespace); blank lines may only end the file.
    The format records no length, so a file cut exactly at a line end reads
    as a shorter model; a file that does not end with a line end (as every
    file minbpe writes does) is reported as truncated.
    Complexity: O(size of the text).
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    unterminated = lines[-1] != ""
    if not unterminated:
        lines.pop()

    def where(n: int) -> str:
        return f"{source}, line {n}"

    def line(n: int, what: str) -> str:
        if n > len(lines):
            raise FormatError(f"{source} is truncated: it ends before {what} (line {n})")
        return lines[n - 1]

    version = line(1, "the version line").strip()
    if version != MINBPE_VERSION:
        raise FormatError(
            f"{where(1)}: not a minbpe model (expected {MINBPE_VERSION!r}, got "
            f"{short_repr(version)})"
        )
    if unterminated:
        raise FormatError(
            f"{source} is truncated: its last line ({short_repr(lines[-1])}) has no line end, and "
            "a .model file ends with one"
        )
    pattern: str | None = line(2, "the pattern line").strip() or None
    if pattern in PATTERNS:
        raise FormatError(
            f"{where(2)}: the pattern is the literal regex {pattern!r}, which bpeds would read "
            "as the name of one of its own patterns"
        )
    count = _int_field(
        line(3, "the number of special tokens").strip(), where(3), "the number of special tokens"
    )
    if count > len(lines) - 3:
        raise FormatError(
            f"{source} is truncated: line 3 announces {count} special tokens but only "
            f"{len(lines) - 3} {'line follows' if len(lines) == 4 else 'lines follow'}"
        )
    specials: dict[str, int] = {}
    owner: dict[int, str] = {}
    for n in range(4, 4 + count):
        fields = lines[n - 1].split()
        if len(fields) != 2:
            raise FormatError(
                f"{where(n)}: a special token line is '<text> <id>', got {short_repr(lines[n - 1])}"
            )
        special, i = fields[0], _int_field(fields[1], where(n), "a special token's id")
        if special in specials:
            raise FormatError(f"{where(n)}: special token {short_repr(special)} is given twice")
        if i in owner:
            raise FormatError(
                f"{where(n)}: special tokens {short_repr(owner[i])} and {short_repr(special)} "
                f"share id {i}"
            )
        specials[special] = i
        owner[i] = special
    merges: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    body = lines[3 + count :]
    while body and not body[-1].strip():
        body.pop()
    for offset, raw in enumerate(body):
        n = 4 + count + offset
        fields = raw.split()
        if len(fields) != 2:
            raise FormatError(
                f"{where(n)}: a merge line is '<left id> <right id>', got {short_repr(raw)}"
            )
        a = _int_field(fields[0], where(n), "a merge's left id")
        b = _int_field(fields[1], where(n), "a merge's right id")
        top = 256 + len(merges)
        if a >= top or b >= top:
            raise FormatError(
                f"{where(n)}: merge ({a}, {b}) makes id {top}, so it may only use ids 0..{top - 1}"
            )
        if (a, b) in seen:
            raise FormatError(f"{where(n)}: merge ({a}, {b}) repeats an earlier merge")
        seen.add((a, b))
        merges.append((a, b))
    return build_tokenizer(source, merges, pattern=pattern, special_tokens=specials)


def load_minbpe(path: PathLike) -> Tokenizer:
    """Read a minbpe ``.model`` file (see :func:`parse_minbpe_model` for the checks).

    Unlike minbpe, the name need not end in ``.model``. A missing file raises
    ``FileNotFoundError``; anything else wrong with it, :class:`FormatError`.
    Complexity: O(size of the file).
    """
    source = str(path)
    return parse_minbpe_model(
        decode_utf8(read_bytes(path, "a minbpe .model file"), source), source=source
    )
