"""The tokenizer: merges, a split pattern and special tokens, with encode/decode/train/save.

A :class:`Tokenizer` is the shared data model of bpeds (the file formats and
the command line are written against it):

- ``merges``: merge ``k`` is a pair of ids that makes id ``256 + k``; ids
  ``0..255`` are the single bytes.
- ``pattern``: the split regex *source* (names such as ``"gpt4"`` are resolved
  when the tokenizer is built), or ``None`` for no split (minbpe's Basic).
- ``special_tokens``: text -> id; the ids are unique and never collide with
  the ids ``0 .. 255 + len(merges)`` of the byte and merge tokens.
- ``options``: what training recorded (score, tie rule, counting, ...), a
  JSON-compatible dict.

The constructor validates all of it and raises :class:`TokenizerError` (a
``ValueError``) naming what to fix, or ``TypeError`` for values of the wrong
type. A tokenizer is a value: its attributes are read-only and return copies;
only the training methods replace its state (in place, like minbpe's and
Hugging Face's ``train`` methods).

Not handled here: the rank-by-bytes encoding algorithm (:mod:`bpeds.tokenizer.encoder`),
patterns (:mod:`bpeds.tokenizer.pretokenize`), the special-token rules
(:mod:`bpeds.tokenizer.special`), training (:mod:`bpeds.tokenizer.trainer`) and the
JSON format (:mod:`bpeds.tokenizer.persist`, whose core,
:mod:`bpeds.tokenizer._model_json`, :meth:`Tokenizer.save` and :meth:`Tokenizer.load`
use directly).

**Layers.** This module imports only modules below it (patterns, special
tokens, the encoder, the JSON format's core, the vocabulary, training).
Training produces a :class:`~bpeds.tokenizer.trained.TrainedModel`, which
:meth:`Tokenizer.from_model` builds a tokenizer from, so the in-place training
methods (:meth:`Tokenizer.train`, :meth:`Tokenizer.train_from_iterator`) call
:func:`bpeds.tokenizer.trainer.train_model` below this module; it is imported
when a tokenizer is first trained, so that loading and encoding never load the
merge driver. ``tests/test_layers.py`` checks that no import goes up.

``resolve_pattern``, ``check_special_texts``, ``BYTE_TOKENS`` and
``TokenizerError`` are importable from here too; their homes are
:mod:`bpeds.tokenizer.pretokenize`, :mod:`bpeds.tokenizer.special`, :mod:`bpeds.vocab` and
:mod:`bpeds.errors`.
"""

from __future__ import annotations

import copy
import json
import os
import random
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bpeds.errors import ModelFormatError, TokenizerError
from bpeds.tokenizer import _model_json
from bpeds.tokenizer.encoder import (
    Encoder,
    Special,
    SpecialTokenError,
    UnknownTokenError,
    as_token_id,
    encode_batch,
    token_table,
)
from bpeds.tokenizer.files import write_files
from bpeds.tokenizer.idmap import IdMap
from bpeds.tokenizer.normalize import Form, check_normalizer
from bpeds.tokenizer.pattern_safety import TimedPattern
from bpeds.tokenizer.pretokenize import PATTERNS, CompiledPattern, resolve_pattern
from bpeds.tokenizer.replay import EventLogError, Replay, Supermerger, check_events
from bpeds.tokenizer.special import (
    check_special_ids,
    check_special_texts,
    special_token_regex,
    split_around,
)
from bpeds.vocab import BYTE_TOKENS, Vocab

if TYPE_CHECKING:
    from bpeds.tokenizer.trained import TrainedModel

__all__ = [
    "BYTE_TOKENS",
    "SpecialTokenError",
    "Tokenizer",
    "TokenizerError",
    "UnknownTokenError",
    "check_special_texts",
    "resolve_pattern",
]


_OWN_PATTERNS = frozenset(PATTERNS.values())


def _check_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    return value


def _check_pair(k: int, pair: object) -> tuple[int, int]:
    """Merge ``k``'s two ids, or a TypeError saying what is wrong with ``pair``."""
    if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise TypeError(f"merge {k} must be a pair of ids, got {pair!r}")
    return _check_int(pair[0], f"merge {k}'s left id"), _check_int(pair[1], f"merge {k}'s right id")


class Tokenizer:
    """A byte-level BPE tokenizer: ``merges``, ``pattern``, ``special_tokens``, ``options``.

    >>> tok = Tokenizer([(104, 105), (256, 33)], pattern=None, special_tokens={"<eos>": 258})
    >>> tok.token_bytes(257), tok.vocab_size
    (b'hi!', 259)
    >>> tok.merges
    [(104, 105), (256, 33)]

    ``pattern``: ``"gpt2"``, ``"gpt4"``, ``"gpt4o"`` (see
    :data:`bpeds.tokenizer.pretokenize.PATTERNS`), any regex source, or ``None`` (no
    split). ``unicode``: the Unicode tables the pattern's classes are read with
    (:mod:`bpeds.tokenizer.unicode_tables`): ``None``, the ``regex`` module's own (as
    minbpe), or ``"16.0"``, those of tiktoken, rustbpe and Hugging Face; it is ``None``
    whatever is given when ``pattern`` is ``None``. Construction validates everything;
    complexity O(number of merges + special tokens squared). Errors:
    :class:`TokenizerError` (a ``ValueError``) for inconsistent parts, ``TypeError`` for
    values of the wrong type.
    """

    __slots__ = (
        "_compiled",
        "_encoder",
        "_events",
        "_gone",
        "_hidden",
        "_idmap",
        "_merges",
        "_normalizer",
        "_options",
        "_pattern",
        "_special",
        "_unicode",
        "_vocab",
    )

    def __init__(
        self,
        merges: Sequence[tuple[int, int]] = (),
        *,
        pattern: str | None = "gpt4",
        special_tokens: Mapping[str, int] | None = None,
        options: Mapping[str, Any] | None = None,
        events: Sequence[Sequence[Any]] | None = None,
        unicode: str | None = None,
        normalizer: str | None = None,
        ids: Sequence[int] | None = None,
    ) -> None:
        if isinstance(merges, str | bytes) or not isinstance(merges, Iterable):
            raise TypeError(f"merges must be a sequence of (int, int) pairs, got {merges!r}")
        vocab = Vocab()
        checked: list[tuple[int, int]] = []
        seen: set[tuple[int, int]] = set()
        for k, pair in enumerate(merges):
            # The common case, a tuple of two ints, is checked by exact types (cheap);
            # anything else takes the full checks.
            if type(pair) is tuple and len(pair) == 2:
                a, b = pair
                if type(a) is not int or type(b) is not int:
                    pair = a, b = _check_pair(k, pair)
            else:
                pair = a, b = _check_pair(k, pair)
            top = BYTE_TOKENS + k
            if not (0 <= a < top and 0 <= b < top):
                raise TokenizerError(
                    f"merge {k} is ({a}, {b}) but makes id {top}: it may only use ids 0..{top - 1}"
                )
            if pair in seen and events is None:
                raise TokenizerError(f"merge {k} ({a}, {b}) repeats an earlier merge")
            seen.add(pair)
            checked.append(pair)
            vocab.add(a, b)
        source, compiled = resolve_pattern(pattern, unicode)
        special: dict[str, int] = {}
        if special_tokens is not None:
            if not isinstance(special_tokens, Mapping):
                raise TypeError(
                    "special_tokens must be a mapping text -> id, got "
                    f"{type(special_tokens).__name__}"
                )
            if ids is None:
                special = check_special_ids(special_tokens, len(checked))
            else:  # the ids are the model's own: a special id only has to be free
                special = check_special_ids(special_tokens, -BYTE_TOKENS)
        opts: dict[str, Any] = {}
        if options is not None:
            if not isinstance(options, Mapping):
                raise TypeError(f"options must be a mapping, got {type(options).__name__}")
            for key in options:
                if not isinstance(key, str):
                    raise TypeError(f"option names must be str, got {key!r}")
            try:
                opts = json.loads(json.dumps(dict(options), allow_nan=False))
            except (TypeError, ValueError) as exc:
                raise TypeError(f"options must be JSON-compatible: {exc}") from None
        log: list[tuple[Any, ...]] | None = None
        gone: frozenset[int] = frozenset()
        hidden: frozenset[int] = frozenset()
        if events is not None:
            if isinstance(events, str | bytes) or not isinstance(events, Sequence):
                raise TypeError(f"events must be a sequence of event lists, got {events!r}")
            try:
                log, gone, hidden = check_events(checked, events)
            except EventLogError as exc:
                raise TokenizerError(f"events: {exc}") from None
        self._events = log
        self._normalizer = check_normalizer(normalizer)
        self._idmap = IdMap.of(ids, BYTE_TOKENS + len(checked), special)
        if self._idmap is not None and log is not None:
            raise TokenizerError(
                "a tokenizer with its own ids (ids=...) encodes by ranked merges; it cannot "
                "also replay a loop variant's event log"
            )
        if ids is not None and self._idmap is None and special:
            check_special_ids(special, len(checked))  # bpeds's own ids after all
        self._gone = gone
        self._hidden = hidden
        self._merges = checked
        self._vocab = vocab
        self._pattern = source
        self._unicode = None if source is None else unicode
        self._compiled = compiled
        self._special = special
        self._options = opts
        self._encoder: Encoder | None = None

    # -- the data model -------------------------------------------------------------------

    @property
    def merges(self) -> list[tuple[int, int]]:
        """Every merge in id order (a copy): ``merges[k]`` made id ``256 + k``. O(merges)."""
        return list(self._merges)

    @property
    def events(self) -> list[list[Any]] | None:
        """The event log of a loop variant's run (see :mod:`bpeds.tokenizer.replay`), or None
        for a plain BPE tokenizer (a copy). O(events)."""
        return None if self._events is None else [list(e) for e in self._events]

    @property
    def pattern(self) -> str | None:
        """The split regex source, or ``None`` for no split."""
        return self._pattern

    @property
    def ids(self) -> list[int] | None:
        """The model's own id of each byte and merge token (``ids[t]`` for bpeds's id
        ``t``: byte ``b`` is ``t = b``, merge ``k`` makes ``t = 256 + k``), or ``None`` when
        they are bpeds's ids. Imported GPT-2, ``cl100k_base`` and Hugging Face tokenizers
        keep their ids this way, and so does training continued from them; every id the
        tokenizer takes or gives (encoding, decoding, :meth:`token_bytes`,
        :meth:`get_vocab`, ...) is then the model's own, while :attr:`merges` stays in
        bpeds's numbering. A copy; O(tokens)."""
        m = self._idmap
        return None if m is None else m.public[: BYTE_TOKENS + len(self._merges)]

    def _replaced(self, **changes: Any) -> Tokenizer:
        """A new tokenizer with every part of this one (merges, pattern, special tokens,
        options, event log, Unicode tables, normaliser, ids) but those ``changes`` names,
        validated as the constructor validates. O(merges + events)."""
        parts: dict[str, Any] = {
            "pattern": self._pattern,
            "special_tokens": self._special,
            "options": self._options,
            "events": self._events,
            "unicode": self._unicode,
            "normalizer": self._normalizer,
            "ids": self.ids,
        }
        parts.update(changes)
        return Tokenizer(parts.pop("merges", self._merges), **parts)

    def renumbered(self) -> Tokenizer:
        """This tokenizer in bpeds's numbering: bytes by value, merge ``k`` as ``256 + k``,
        special tokens after the merges in the order of their ids; itself when it has no
        ids of its own (:attr:`ids`). Encodes the same tokens, under other ids.

        >>> own = Tokenizer([(97, 98)], pattern=None, ids=[*range(1, 257), 0])
        >>> own.encode("ab"), own.renumbered().encode("ab")
        ([0], [256])

        O(merges + special tokens).
        """
        if self._idmap is None:
            return self
        top = BYTE_TOKENS + len(self._merges)
        order = sorted(self._special, key=self._special.__getitem__)
        return self._replaced(special_tokens={t: top + j for j, t in enumerate(order)}, ids=None)

    @property
    def normalizer(self) -> Form | None:
        """The Unicode normalisation applied to text before it is split (``"NFC"``,
        ``"NFD"``, ``"NFKC"``, ``"NFKD"``), or ``None``; see :mod:`bpeds.tokenizer.normalize`."""
        return self._normalizer

    def normalize(self, text: str) -> str:
        """``text`` as encoding sees it between special tokens: normalised by
        :attr:`normalizer` (unchanged without one).

        >>> Tokenizer(normalizer="NFKC").normalize("ﬁ①")
        'fi1'
        """
        form = self._normalizer
        return text if form is None else unicodedata.normalize(form, text)

    @property
    def unicode(self) -> str | None:
        """The Unicode tables the pattern's classes are read with: ``None`` for the ``regex``
        module's own, ``"16.0"`` for tiktoken's, rustbpe's and Hugging Face's (see
        :mod:`bpeds.tokenizer.unicode_tables`)."""
        return self._unicode

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special-token text -> id (a copy)."""
        return dict(self._special)

    @property
    def options(self) -> dict[str, Any]:
        """The training options recorded with this tokenizer (a deep copy)."""
        return copy.deepcopy(self._options)

    @property
    def num_merges(self) -> int:
        """``len(merges)``, without the copy. O(1)."""
        return len(self._merges)

    @property
    def vocab_size(self) -> int:
        """``256 + len(merges) + len(special_tokens)``: the number of tokens, less
        the tokens a loop variant removed or hides from encoding. O(1).

        Special ids chosen by the caller may leave gaps, so the largest id can
        be larger than ``vocab_size - 1``; see :attr:`max_token_id`.
        """
        return (
            BYTE_TOKENS
            + len(self._merges)
            + len(self._special)
            - len(self._gone)
            - len(self._hidden)
        )

    @property
    def max_token_id(self) -> int:
        """The largest id in use. O(special tokens)."""
        if self._idmap is not None:
            return max(self._idmap.public)
        return max([BYTE_TOKENS + len(self._merges) - 1, *self._special.values()])

    def token_bytes(self, token: int) -> bytes:
        """The bytes of a byte or merge token, built on demand from its parents.

        >>> Tokenizer([(97, 98)]).token_bytes(256)
        b'ab'

        A special-token id or an unknown id raises :class:`UnknownTokenError`
        (:meth:`id_to_token` also covers special tokens). Complexity: O(length
        of the token), O(1) when recently built.
        """
        token = as_token_id(token)
        inner = self._inner(token)
        if inner is not None:
            return self._vocab.token_bytes(inner)
        for text, i in self._special.items():
            if i == token:
                raise UnknownTokenError(
                    f"id {token} is the special token {text!r}, which has no merge bytes; "
                    "id_to_token() gives its UTF-8 text"
                )
        known = (
            f"0..{BYTE_TOKENS + len(self._merges) - 1}"
            if self._idmap is None
            else "this model's own (see Tokenizer.ids)"
        )
        raise UnknownTokenError(f"unknown token id {token}: byte and merge ids are {known}")

    def _inner(self, token: int) -> int | None:
        """bpeds's id of a byte or merge token given by its public id, else ``None``."""
        m = self._idmap
        top = BYTE_TOKENS + len(self._merges)
        if m is None:
            return token if 0 <= token < top else None
        inner = m.one(token)
        return inner if inner is not None and inner < top else None

    def id_to_token(self, token: int) -> bytes:
        """The bytes of any id: a byte or merge token's bytes, a special token's UTF-8 text.

        >>> Tokenizer([(97, 98)], special_tokens={"<s>": 257}).id_to_token(257)
        b'<s>'

        Unknown ids raise :class:`UnknownTokenError`. O(length of the token).
        """
        token = as_token_id(token)
        inner = self._inner(token)
        if inner is not None:
            return self._vocab.token_bytes(inner)
        for text, i in self._special.items():
            if i == token:
                return text.encode("utf-8")
        return self.token_bytes(token)  # raises the explanatory error

    def token_to_id(self, token: bytes | str) -> int | None:
        """The id of a token given by its bytes or text, or ``None`` if there is none.

        A ``str`` that is a special token's text gives the special id; any other
        ``str`` is looked up by its UTF-8 bytes. Bytes made by several merges
        give the lowest id (the one encoding produces); bytes equal to a special
        token's UTF-8 text and to no ordinary token give the special id.

        >>> tok = Tokenizer([(97, 98)], special_tokens={"<s>": 257})
        >>> tok.token_to_id(b"ab"), tok.token_to_id("<s>"), tok.token_to_id("zz")
        (256, 257, None)

        Complexity: O(1) after the encoding tables are built (O(total token bytes), once).
        """
        if isinstance(token, str):
            special = self._special.get(token)
            if special is not None:
                return special
            data = token.encode("utf-8", "surrogatepass")
        elif isinstance(token, bytes | bytearray | memoryview):
            data = bytes(token)
        else:
            raise TypeError(f"token must be bytes or str, got {type(token).__name__}")
        found = self._enc().ranks.get(data)
        if found is not None:
            return found if self._idmap is None else self._idmap.public[found]
        try:
            return self._special.get(data.decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def token_ids(self) -> list[int]:
        """Every id encoding can emit, ascending: the 256 bytes, the merged tokens a loop
        variant did not remove or hide, the special tokens. ``len(token_ids()) ==
        vocab_size``.

        >>> Tokenizer([(97, 98)], special_tokens={"<s>": 300}).token_ids()[-3:]
        [255, 256, 300]

        O(vocab size).
        """
        gone = self._gone | self._hidden
        top = BYTE_TOKENS + len(self._merges)
        ids = [t for t in range(top) if t not in gone] if gone else list(range(top))
        if self._idmap is not None:
            return sorted(self._idmap.out(ids) + list(self._special.values()))
        return ids + sorted(self._special.values())

    def get_vocab(self) -> dict[str, int]:
        """The vocabulary as Hugging Face's ``Tokenizer.get_vocab()`` shows a byte-level
        BPE: ``{token string: id}`` over :meth:`token_ids`, each byte shown as GPT-2's
        printable stand-in (a space is ``Ġ``, a newline ``Ċ``), a special token as its text.

        >>> vocab = Tokenizer([(32, 116)], special_tokens={"<s>": 257}).get_vocab()
        >>> vocab["Ġt"], vocab["a"], vocab["<s>"], len(vocab)
        (256, 97, 257, 258)

        The strings are those of a ``tokenizer.json`` written by
        :func:`bpeds.tokenizer.formats.save_hf`. Two ids with the same bytes (made again by
        a loop variant) keep the lowest. For the raw bytes use :meth:`id_to_token` (id ->
        bytes), :meth:`token_to_id` (bytes or text -> id) or :meth:`mergeable_ranks`.
        O(total token bytes).
        """
        from bpeds.scoring.ties import gpt2_byte_to_unicode

        chars = gpt2_byte_to_unicode()
        table = "".join(chars[b] for b in range(BYTE_TOKENS))
        special = {i: text for text, i in self._special.items()}
        out: dict[str, int] = {}
        for t in self.token_ids():
            text = special.get(t)
            if text is None:
                text = "".join(table[b] for b in self.id_to_token(t))
            out.setdefault(text, t)
        return out

    def mergeable_ranks(self) -> dict[bytes, int]:
        """``{token bytes: id}`` over byte and merge tokens, the lowest id for repeated bytes.

        This is tiktoken's ``mergeable_ranks``: ``tiktoken.Encoding(name,
        pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(),
        special_tokens=tok.special_tokens)`` encodes exactly as :meth:`encode`.
        Complexity: O(total token bytes) the first time, then O(tokens) (a copy).
        """
        ranks = self._enc().ranks
        if self._idmap is None:
            return dict(ranks)
        public = self._idmap.public
        return {b: public[i] for b, i in ranks.items()}

    # -- encoding and decoding --------------------------------------------------------------

    def _enc(self) -> Encoder:
        enc = self._encoder
        if enc is None:
            # A pattern that is not one of bpeds's own is matched with a time limit.
            compiled = self._compiled
            split: CompiledPattern | TimedPattern | None = compiled
            if compiled is not None and self._pattern not in _OWN_PATTERNS:
                split = TimedPattern(compiled)
            piece = join = None
            if self.replays:
                assert self._events is not None
                parents = {BYTE_TOKENS + k: m for k, m in enumerate(self._merges)}
                piece = Replay(self._events, parents, self._hidden)
                join = Supermerger(self._events) or None
            special = self._special if self._idmap is None else self._idmap.special_internal
            enc = self._encoder = Encoder(
                token_table(self._merges), split, special, piece=piece, join=join
            )
        return enc

    @property
    def replays(self) -> bool:
        """True when encoding replays a loop variant's event log (tokens removed,
        made again or hidden): formats that hold only ranked merges cannot express
        such a tokenizer, and refuse it. O(events) the first time."""
        return self._events is not None and bool(self._gone or self._hidden or self._remakes())

    def _remakes(self) -> bool:
        """Does the event log do more than make each merge once, in id order?"""
        assert self._events is not None
        return any(e[0] != "merge" for e in self._events) or len(self._events) != len(self._merges)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Special = frozenset(),
        disallowed_special: Special = "all",
    ) -> list[int]:
        """Encode ``text`` to ids, with ``tiktoken.Encoding.encode``'s semantics.

        >>> tok = Tokenizer([(104, 105)], pattern="gpt2", special_tokens={"<s>": 257})
        >>> tok.encode("hi hi<s>", allowed_special="all")
        [256, 32, 256, 257]
        >>> tok.encode("hi<s>")
        Traceback (most recent call last):
        ...
        bpeds.tokenizer.encoder.SpecialTokenError: the text holds '<s>', which is a disallowed ...
        >>> tok.encode("<s>", disallowed_special=())
        [60, 115, 62]

        ``allowed_special``: "all" or a set of special texts to encode as
        special ids. ``disallowed_special``: "all" (every special token not
        allowed) or a collection of texts whose presence raises
        :class:`SpecialTokenError`; ``()`` encodes them as ordinary text. Where
        allowed special tokens overlap the leftmost, then longest, wins. The
        text between special tokens is split by the pattern and each piece is
        merged by rank of concatenated bytes (see :mod:`bpeds.tokenizer.encoder`). Lone
        surrogates become U+FFFD. Complexity: O(len(text)) plus the merging
        of uncached pieces (O(n log n) for a piece of n bytes).
        """
        if self._normalizer is not None:
            ids = self._normalized(
                text, self._enc().encode_ordinary, allowed_special, disallowed_special
            )
        else:
            ids = self._enc().encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
        return ids if self._idmap is None else self._idmap.out(ids)

    def _normalized(
        self,
        text: str,
        ordinary: Callable[[str], list[int]],
        allowed_special: Special,
        disallowed_special: Special,
    ) -> list[int]:
        """Encode with the normaliser: special tokens found in the raw text (a disallowed
        one raises as :meth:`encode` does), the text between them normalised and encoded
        by ``ordinary``. O(len(text)) plus the encoding."""
        from bpeds.tokenizer.dropout import usable_specials

        enc = self._enc()
        usable = usable_specials(enc, text, allowed_special, disallowed_special)
        form = self._normalizer
        assert form is not None

        def normalized(part: str) -> list[int]:
            return ordinary(unicodedata.normalize(form, part))

        return split_around(text, usable, enc.special, normalized) if usable else normalized(text)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Special = frozenset(),
        disallowed_special: Special = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """:meth:`encode`'s ids and the character span ``(start, end)`` of ``text`` each
        covers, as Hugging Face's ``Encoding.offsets``.

        >>> tok = Tokenizer([(104, 105)], pattern="gpt2")
        >>> tok.encode_with_offsets("hi é")
        ([256, 32, 195, 169], [(0, 2), (2, 3), (3, 4), (3, 4)])

        With a :attr:`normalizer` the spans index the normalised text (the text between
        special tokens normalised, as encoding sees it), not ``text`` itself.
        A token that holds only some of a character's UTF-8 bytes spans that whole
        character, so the two tokens of ``é`` above both span ``(3, 4)``; a token that
        ends one character and starts the next spans both. ``text[start:end]`` over the
        spans of consecutive tokens covers the text once, in order. Arguments and errors
        as :meth:`encode`. Complexity: that of :meth:`encode`, plus O(len(text)).
        """
        if self._normalizer is not None:
            text = self._normalized_with_specials(text, allowed_special, disallowed_special)
        ids = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return ids, self._spans(text, ids)

    def _normalized_with_specials(
        self, text: str, allowed_special: Special, disallowed_special: Special
    ) -> str:
        """The text with the parts between allowed special tokens normalised (what the
        spans of :meth:`encode_with_offsets` index, for a tokenizer with a normaliser)."""
        allowed, _ = self._enc().resolve_special(allowed_special, disallowed_special)
        usable = allowed.intersection(self._special)
        if not usable:
            return self.normalize(text)
        parts: list[str] = []
        pos = 0
        for m in special_token_regex(usable).finditer(text):
            parts += [self.normalize(text[pos : m.start()]), m.group()]
            pos = m.end()
        parts.append(self.normalize(text[pos:]))
        return "".join(parts)

    def _spans(self, text: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The character span of each of ``ids``, the encoding of ``text``. O(len(text))."""
        # first[b]: the character holding byte b of text's UTF-8 (one entry per byte).
        first: list[int] = []
        for i, ch in enumerate(text):
            c = ord(ch)
            first.extend([i] * (1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4))
        spans: list[tuple[int, int]] = []
        at = 0
        length = self._token_length
        for t in ids:
            n = length(t)
            spans.append((first[at], first[at + n - 1] + 1) if n else (len(text), len(text)))
            at += n
        return spans

    def _token_length(self, token: int) -> int:
        """The UTF-8 length of a token's bytes (a special token's text). O(1) when cached."""
        return len(self.id_to_token(token))

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """:meth:`decode`'s text and the character offset at which each token starts in
        it, as tiktoken's ``decode_with_offsets``: a token that starts inside a character
        gets that character's offset.

        >>> Tokenizer([(104, 105)], pattern="gpt2").decode_with_offsets([256, 32, 195, 169])
        ('hi é', [0, 2, 3, 3])

        O(output bytes).
        """
        data = self.decode_bytes(ids)
        starts: list[int] = []
        chars = at = 0
        for t in ids:
            starts.append(chars - (1 if 0x80 <= data[at] < 0xC0 and chars else 0))
            n = self._token_length(t)
            chars += sum(1 for b in data[at : at + n] if not 0x80 <= b < 0xC0)
            at += n
        return data.decode("utf-8", "replace"), starts

    def encode_with_dropout(
        self,
        text: str,
        dropout: float,
        *,
        seed: int | random.Random | None = None,
        allowed_special: Special = frozenset(),
        disallowed_special: Special = "all",
    ) -> list[int]:
        """Encode ``text`` with BPE-dropout: each candidate merge is skipped with
        probability ``dropout``, as Hugging Face's BPE with ``dropout=`` does (see
        :mod:`bpeds.tokenizer.dropout`); the result decodes to ``text`` and is a finer
        split of it.

        >>> tok = Tokenizer([(104, 105)], pattern="gpt2")
        >>> tok.encode_with_dropout("hi hi", 0.0), tok.encode_with_dropout("hi hi", 1.0)
        ([256, 32, 256], [104, 105, 32, 104, 105])

        ``seed``: an int or a :class:`random.Random` (the same seed gives the same ids
        on every platform), or ``None`` (fresh randomness each call). ``dropout=0`` is
        :meth:`encode`. Special-token arguments and errors as :meth:`encode`; a
        tokenizer that encodes by a loop variant's event log raises ``ValueError`` (its
        encoding is not rank merging). Complexity: O(n log n) per piece of n bytes (no
        piece cache).
        """
        from bpeds.tokenizer.dropout import DropoutEncoder, check_dropout

        p = check_dropout(dropout)
        if p == 0.0:
            return self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
        if self.replays:
            raise ValueError(
                "BPE-dropout skips rank merges, but this tokenizer encodes by a loop "
                "variant's event log (removed, re-made or hidden tokens)"
            )
        if isinstance(seed, bool) or not (seed is None or isinstance(seed, int | random.Random)):
            raise TypeError(f"seed must be an int, a random.Random or None, got {seed!r}")
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        compiled = self._compiled
        findall = None if compiled is None else self._split_function()
        dropped = DropoutEncoder(self._enc(), findall, self._merges)
        if self._normalizer is not None:
            ids = self._normalized(
                text,
                lambda t: dropped.encode(t, p, rng, (), ()),
                allowed_special,
                disallowed_special,
            )
        else:
            ids = dropped.encode(text, p, rng, allowed_special, disallowed_special)
        return ids if self._idmap is None else self._idmap.out(ids)

    def _split_function(self) -> Callable[[str], list[str]]:
        """The split of :meth:`encode` (a pattern not of bpeds's own, with a time limit)."""
        assert self._compiled is not None
        if self._pattern not in _OWN_PATTERNS:
            return TimedPattern(self._compiled).findall
        return self._compiled.findall

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating special-token text as ordinary text.

        Equals ``encode(text, disallowed_special=())``.

        >>> Tokenizer([(104, 105)], pattern="gpt2").encode_ordinary("hi hi")
        [256, 32, 256]
        """
        if self._normalizer is not None:
            if not isinstance(text, str):
                raise TypeError(f"text must be a str, got {type(text).__name__}")
            text = unicodedata.normalize(self._normalizer, text)
        ids = self._enc().encode_ordinary(text)
        return ids if self._idmap is None else self._idmap.out(ids)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        workers: int | None = None,
        allowed_special: Special = frozenset(),
        disallowed_special: Special = "all",
    ) -> list[list[int]]:
        """``[encode(t, ...) for t in texts]``, in processes for large batches.

        ``workers=None`` uses up to ``min(8, cpu_count)`` processes when the
        batch holds at least 2 texts and 1 Mi characters, else this process;
        ``workers=1`` never starts processes; ``workers=k`` uses ``k``. The
        result is the same in every case; the first text (in order) that
        raises makes the batch raise.

        >>> Tokenizer([(104, 105)], pattern="gpt2").encode_batch(["hi", "ih"])
        [[256], [105, 104]]
        """
        return encode_batch(
            self,
            texts,
            workers=workers,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            ordinary=False,
        )

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, workers: int | None = None
    ) -> list[list[int]]:
        """``[encode_ordinary(t) for t in texts]``, in processes like :meth:`encode_batch`."""
        return encode_batch(
            self,
            texts,
            workers=workers,
            allowed_special=frozenset(),
            disallowed_special=(),
            ordinary=True,
        )

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids``, special tokens as their UTF-8 text.

        >>> Tokenizer([(104, 105)], pattern="gpt2").decode_bytes([256, 33])
        b'hi!'

        An unknown id raises :class:`UnknownTokenError` naming it and its
        position; a non-int raises ``TypeError``. O(output bytes).
        """
        if self._idmap is not None:
            ids = self._idmap.into(ids)
        return self._enc().decode_bytes(ids)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace") -> list[str]:
        """``[decode(ids, errors) for ids in batch]`` (tiktoken's and Hugging Face's name).

        >>> tok = Tokenizer(pattern="gpt2")
        >>> tok.decode_batch(tok.encode_batch(["one", "two"]))
        ['one', 'two']

        Errors as :meth:`decode`. O(output bytes).
        """
        return [self.decode(ids, errors) for ids in batch]

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode ids to text: ``decode_bytes(ids).decode("utf-8", errors)``.

        ``errors`` is as for ``bytes.decode`` (default ``"replace"``, as in
        tiktoken: ids that cut a character give U+FFFD).

        >>> tok = Tokenizer(pattern="gpt2")
        >>> tok.decode(tok.encode("naïve ☃"))
        'naïve ☃'
        >>> tok.decode([226, 152]), tok.decode([226, 152], errors="ignore")
        ('\ufffd', '')
        """
        if self._idmap is not None:
            ids = self._idmap.into(ids)
        return self._enc().decode(ids, errors)

    # -- training (in place, like minbpe's and Hugging Face's train methods) -----------------

    def _train_defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        # The pattern is this tokenizer's; with a preset, the gpt4 pattern (the
        # constructor's default, so possibly never chosen) yields to the preset's.
        if "pattern" not in options and not (
            options.get("preset") is not None and self._pattern == PATTERNS["gpt4"]
        ):
            options["pattern"] = self._pattern
        if "unicode" not in options and not (
            options.get("preset") is not None and self._unicode is None
        ):
            options["unicode"] = self._unicode
        if "special_tokens" not in options:
            options["special_tokens"] = sorted(self._special, key=self._special.__getitem__)
        if "normalizer" not in options:
            options["normalizer"] = self._normalizer
        return options

    def train_from_iterator(
        self, iterator: Iterable[str] | Any, vocab_size: int, **options: Any
    ) -> Tokenizer:
        """Retrain this tokenizer in place on ``iterator`` and return it (Hugging Face style).

        Each item is one unit the pattern sees on its own (a str, or a path:
        one file). The pattern and the special-token texts are this
        tokenizer's unless given in ``options``; special tokens are numbered
        after the new merges in their current order. With a ``preset``, a
        tokenizer whose pattern is ``"gpt4"`` (the default) takes the preset's
        pattern; another pattern must agree with the preset. ``options`` are those of
        :func:`bpeds.tokenizer.training.train` (``tie``, ``preset``, ``min_frequency``,
        ``workers``, ...; a ``base`` is a loaded tokenizer, not a path); errors are too.

        >>> tok = Tokenizer(pattern="gpt2").train_from_iterator(["low lower", "lowest"], 258)
        >>> tok.token_bytes(257)
        b'low'
        """
        return self._retrain(iterator, vocab_size, self._train_defaults(dict(options)))

    def train(
        self, text: str | Any, vocab_size: int, verbose: bool = False, **options: Any
    ) -> Tokenizer:
        """Retrain this tokenizer in place on ``text`` and return it (minbpe style).

        ``text`` is one unit (or anything :func:`bpeds.tokenizer.training.train`
        accepts). ``verbose=True`` prints one line per merge to stdout, as
        minbpe does. Otherwise as :meth:`train_from_iterator`.

        >>> tok = Tokenizer(pattern=None)
        >>> _ = tok.train("aaabdaaabac", 259, tie="leftmost", verbose=True)
        merge 1/3: (97, 97) -> 256 (b'aa') had 4 occurrences
        merge 2/3: (256, 97) -> 257 (b'aaa') had 2 occurrences
        merge 3/3: (257, 98) -> 258 (b'aaab') had 2 occurrences
        """
        opts = self._train_defaults(dict(options))
        if verbose:
            from bpeds.tokenizer.trainer import merges_for

            total = merges_for(vocab_size, len(opts["special_tokens"]))
            user = opts.get("on_merge")

            def report(record: Any, token: bytes) -> None:
                print(
                    f"merge {record.new_id - BYTE_TOKENS + 1}/{total}: {record.pair} -> "
                    f"{record.new_id} ({token!r}) had {record.count} occurrences"
                )
                if user is not None:
                    user(record, token)

            opts["on_merge"] = report
        return self._retrain(text, vocab_size, opts)

    def _retrain(self, data: object, vocab_size: int, options: dict[str, Any]) -> Tokenizer:
        """Replace this tokenizer's state by what training ``data`` with ``options`` (those
        of :func:`bpeds.train`, ``base`` a loaded tokenizer) gives; return self."""
        from bpeds.tokenizer.trainer import TrainArguments, train_model

        trained = train_model(data, vocab_size, TrainArguments(**options))
        self._replace(Tokenizer.from_model(trained))
        return self

    @classmethod
    def from_model(cls, model: TrainedModel) -> Tokenizer:
        """The tokenizer a :class:`~bpeds.tokenizer.trained.TrainedModel` describes, its
        parts validated as the constructor validates them (and with its errors).

        >>> from bpeds.tokenizer.trained import TrainedModel
        >>> Tokenizer.from_model(TrainedModel([(104, 105)], None, {"<s>": 257}, {}))
        Tokenizer(merges=<1>, pattern=None, special_tokens={'<s>': 257})
        """
        return cls(
            model.merges,
            pattern=model.pattern,
            special_tokens=model.special_tokens,
            options=model.options,
            events=model.events,
            unicode=model.unicode,
            normalizer=model.normalizer,
            ids=model.ids,
        )

    # -- persistence --------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write this tokenizer to ``path`` in bpeds' versioned JSON format, atomically.

        An existing file is never replaced unless ``overwrite=True``
        (``FileExistsError``); a failed save leaves nothing behind. See
        :mod:`bpeds.tokenizer.persist` (``persist.save(tok, path)`` is the same).
        """
        text = _model_json.render(
            self._pattern,
            self._special,
            self._options,
            self._merges,
            self.events,
            self._unicode,
            normalizer=self._normalizer,
            ids=self.ids,
        )
        write_files([(path, (text + "\n").encode("utf-8"))], overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Read a tokenizer written by :meth:`save`, validating everything.

        A corrupt, truncated or hostile file raises
        :class:`~bpeds.errors.ModelFormatError` (a ``ValueError``, importable
        from :mod:`bpeds.tokenizer.persist`); an unreadable file raises ``OSError``. See
        :mod:`bpeds.tokenizer.persist` (``persist.load(path)`` is the same). Another
        tool's model file (a Hugging Face ``tokenizer.json``, a minbpe ``.model``, a
        ``.tiktoken`` file) raises ``ModelFormatError`` naming the call that reads it:
        :func:`bpeds.load`, which reads every supported format.
        """
        try:
            return _model_json.build(cls, _model_json.read(path))
        except ModelFormatError:
            try:
                with open(path, "rb") as f:
                    kind = _model_json.other_kind(f.read(4096))
            except OSError:
                kind = None
            if kind is None:
                raise
            raise ModelFormatError(
                f"{os.fspath(path)} is not a bpeds model file but {_model_json.READERS[kind]}"
            ) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return (
            self._merges == other._merges
            and self._pattern == other._pattern
            and self._unicode == other._unicode
            and self._special == other._special
            and self._options == other._options
            and self._events == other._events
            and self._normalizer == other._normalizer
            and self.ids == other.ids
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = next((k for k, v in PATTERNS.items() if v == self._pattern), None)
        pat = repr(name) if name is not None else ("None" if self._pattern is None else "...")
        tables = "" if self._unicode is None else f", unicode={self._unicode!r}"
        norm = "" if self._normalizer is None else f", normalizer={self._normalizer!r}"
        return (
            f"Tokenizer(merges=<{len(self._merges)}>, pattern={pat}{tables}, "
            f"special_tokens={self._special!r}{norm})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return {
            "merges": self._merges,
            "pattern": self._pattern,
            "special_tokens": self._special,
            "options": self._options,
            "events": self.events,
            "unicode": self._unicode,
            "normalizer": self._normalizer,
            "ids": self.ids,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["merges"],
            pattern=state["pattern"],
            special_tokens=state["special_tokens"],
            options=state["options"],
            events=state.get("events"),
            unicode=state.get("unicode"),
            normalizer=state.get("normalizer"),
            ids=state.get("ids"),
        )

    def _replace(self, other: Tokenizer) -> None:
        """Take over ``other``'s whole state (used by the in-place training methods)."""
        self._merges = other._merges
        self._vocab = other._vocab
        self._pattern = other._pattern
        self._unicode = other._unicode
        self._compiled = other._compiled
        self._special = other._special
        self._options = other._options
        self._events = other._events
        self._gone = other._gone
        self._hidden = other._hidden
        self._normalizer = other._normalizer
        self._idmap = other._idmap
        self._encoder = None
