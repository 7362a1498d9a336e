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
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import regex

from bpeds.errors import TokenizerError
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
from bpeds.tokenizer.pattern_safety import TimedPattern
from bpeds.tokenizer.pretokenize import PATTERNS, resolve_pattern
from bpeds.tokenizer.replay import EventLogError, Replay, Supermerger, check_events
from bpeds.tokenizer.special import check_special_ids, check_special_texts
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
    split). Construction validates everything; complexity O(number of merges +
    special tokens squared). Errors: :class:`TokenizerError` (a ``ValueError``)
    for inconsistent parts, ``TypeError`` for values of the wrong type.
    """

    __slots__ = (
        "_compiled",
        "_encoder",
        "_events",
        "_gone",
        "_hidden",
        "_merges",
        "_options",
        "_pattern",
        "_special",
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
        source, compiled = resolve_pattern(pattern)
        special: dict[str, int] = {}
        if special_tokens is not None:
            if not isinstance(special_tokens, Mapping):
                raise TypeError(
                    "special_tokens must be a mapping text -> id, got "
                    f"{type(special_tokens).__name__}"
                )
            special = check_special_ids(special_tokens, len(checked))
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
        self._gone = gone
        self._hidden = hidden
        self._merges = checked
        self._vocab = vocab
        self._pattern = source
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
        if not 0 <= token < BYTE_TOKENS + len(self._merges):
            for text, i in self._special.items():
                if i == token:
                    raise UnknownTokenError(
                        f"id {token} is the special token {text!r}, which has no merge bytes; "
                        "id_to_token() gives its UTF-8 text"
                    )
            raise UnknownTokenError(
                f"unknown token id {token}: byte and merge ids are "
                f"0..{BYTE_TOKENS + len(self._merges) - 1}"
            )
        return self._vocab.token_bytes(token)

    def id_to_token(self, token: int) -> bytes:
        """The bytes of any id: a byte or merge token's bytes, a special token's UTF-8 text.

        >>> Tokenizer([(97, 98)], special_tokens={"<s>": 257}).id_to_token(257)
        b'<s>'

        Unknown ids raise :class:`UnknownTokenError`. O(length of the token).
        """
        token = as_token_id(token)
        if 0 <= token < BYTE_TOKENS + len(self._merges):
            return self._vocab.token_bytes(token)
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
            return found
        try:
            return self._special.get(data.decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def mergeable_ranks(self) -> dict[bytes, int]:
        """``{token bytes: id}`` over byte and merge tokens, the lowest id for repeated bytes.

        This is tiktoken's ``mergeable_ranks``: ``tiktoken.Encoding(name,
        pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(),
        special_tokens=tok.special_tokens)`` encodes exactly as :meth:`encode`.
        Complexity: O(total token bytes) the first time, then O(tokens) (a copy).
        """
        return dict(self._enc().ranks)

    # -- encoding and decoding --------------------------------------------------------------

    def _enc(self) -> Encoder:
        enc = self._encoder
        if enc is None:
            # A pattern that is not one of bpeds's own is matched with a time limit.
            compiled = self._compiled
            split: regex.Pattern[str] | TimedPattern | None = compiled
            if compiled is not None and self._pattern not in _OWN_PATTERNS:
                split = TimedPattern(compiled)
            piece = join = None
            if self.replays:
                assert self._events is not None
                parents = {BYTE_TOKENS + k: m for k, m in enumerate(self._merges)}
                piece = Replay(self._events, parents, self._hidden)
                join = Supermerger(self._events) or None
            enc = self._encoder = Encoder(
                token_table(self._merges), split, self._special, piece=piece, join=join
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
        return self._enc().encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating special-token text as ordinary text.

        Equals ``encode(text, disallowed_special=())``.

        >>> Tokenizer([(104, 105)], pattern="gpt2").encode_ordinary("hi hi")
        [256, 32, 256]
        """
        return self._enc().encode_ordinary(text)

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
        return self._enc().decode_bytes(ids)

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
        return self._enc().decode(ids, errors)

    # -- training (in place, like minbpe's and Hugging Face's train methods) -----------------

    def _train_defaults(self, options: dict[str, Any]) -> dict[str, Any]:
        # The pattern is this tokenizer's; with a preset, the gpt4 pattern (the
        # constructor's default, so possibly never chosen) yields to the preset's.
        if "pattern" not in options and not (
            options.get("preset") is not None and self._pattern == PATTERNS["gpt4"]
        ):
            options["pattern"] = self._pattern
        if "special_tokens" not in options:
            options["special_tokens"] = sorted(self._special, key=self._special.__getitem__)
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
        )

    # -- persistence --------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write this tokenizer to ``path`` in bpeds' versioned JSON format, atomically.

        An existing file is never replaced unless ``overwrite=True``
        (``FileExistsError``); a failed save leaves nothing behind. See
        :mod:`bpeds.tokenizer.persist` (``persist.save(tok, path)`` is the same).
        """
        text = _model_json.render(
            self._pattern, self._special, self._options, self._merges, self.events
        )
        write_files([(path, (text + "\n").encode("utf-8"))], overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Read a tokenizer written by :meth:`save`, validating everything.

        A corrupt, truncated or hostile file raises
        :class:`~bpeds.errors.ModelFormatError` (a ``ValueError``, importable
        from :mod:`bpeds.tokenizer.persist`); an unreadable file raises ``OSError``. See
        :mod:`bpeds.tokenizer.persist` (``persist.load(path)`` is the same).
        """
        return _model_json.build(cls, _model_json.read(path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return (
            self._merges == other._merges
            and self._pattern == other._pattern
            and self._special == other._special
            and self._options == other._options
            and self._events == other._events
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        name = next((k for k, v in PATTERNS.items() if v == self._pattern), None)
        pat = repr(name) if name is not None else ("None" if self._pattern is None else "...")
        return (
            f"Tokenizer(merges=<{len(self._merges)}>, pattern={pat}, "
            f"special_tokens={self._special!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return {
            "merges": self._merges,
            "pattern": self._pattern,
            "special_tokens": self._special,
            "options": self._options,
            "events": self.events,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["merges"],
            pattern=state["pattern"],
            special_tokens=state["special_tokens"],
            options=state["options"],
            events=state.get("events"),
        )

    def _replace(self, other: Tokenizer) -> None:
        """Take over ``other``'s whole state (used by the in-place training methods)."""
        self._merges = other._merges
        self._vocab = other._vocab
        self._pattern = other._pattern
        self._compiled = other._compiled
        self._special = other._special
        self._options = other._options
        self._events = other._events
        self._gone = other._gone
        self._hidden = other._hidden
        self._encoder = None
