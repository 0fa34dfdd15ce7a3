"""Canonical encoding of Python values to msgpack bytes and back: the reference implementation.

Every value becomes the same bytes whatever the hash seed, timezone, locale, working
directory or implementation. msgpack natives carry None, bool, 64-bit ints, floats, str,
bytes, lists and dicts; ext types carry the rest (docs/FORMAT.md lists every code).
Decoding never imports a module, never constructs a user class and never unpickles: it
returns plain values plus the small frozen value types defined here.
"""

from __future__ import annotations

import datetime as _dt
import operator
import pathlib
import re
import uuid as _uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

import msgpack
import xxhash

from .errors import CorruptLog, LimitExceeded
from .forms import canonical_form
from .normalize import BUILTIN_RULES, DEFAULT_RULES, Numbering, RuleSet, may_match, normalize_text
from .values import (
    Custom,
    Cycle,
    EnumValue,
    ExceptionValue,
    Identities,
    Instance,
    ObjectState,
    Opaque,
    Pairs,
    Placeholder,
    Record,
    SetItems,
    Unencodable,
    qualified_name,
)

# ext codes: stable forever within format 1.x (docs/FORMAT.md).
EXT_TUPLE = 1
EXT_SET = 2
EXT_FROZENSET = 3
EXT_BIGINT = 4
EXT_DECIMAL = 5
EXT_UUID = 6
EXT_DATETIME = 7
EXT_DATE = 8
EXT_TIME = 9
EXT_TIMEDELTA = 10
EXT_PATH = 11
EXT_ENUM = 12
EXT_RECORD = 13
EXT_EXCEPTION = 14
EXT_PLACEHOLDER = 15
EXT_CYCLE = 16
EXT_OPAQUE = 17
EXT_SURROGATE_STR = 18
EXT_UNENCODABLE = 19
EXT_INSTANCE = 20
EXT_CUSTOM = 21
EXT_OBJECT = 22
EXT_OVER_BUDGET = 23
EXT_PAST_DEPTH = 24

# Objects recorded by their state (docs/FORMAT.md, "Objects"): objects nested inside
# an object's state are written by state this many levels down, deeper ones by
# identity; an outermost object whose state, written without normalization, would
# take more than OBJECT_BUDGET bytes is written shallow (the objects it holds by
# identity), and by identity alone when even that takes more.
MAX_OBJECT_DEPTH = 3
OBJECT_BUDGET = 4096

# The first byte of every event frame: a fixarray of its 8 fields (docs/FORMAT.md).
FRAME_HEAD = 0x98

# Encoding limits. A value past them is recorded as an Unencodable marker, never dropped
# silently; the reader enforces the same limits (plus headroom for the markers).
MAX_DEPTH = 64
MAX_STR = 16 * 1024 * 1024
MAX_ITEMS = 1_000_000
# The reader's limits: ext nesting (each tuple, set or record level is one) and the
# largest event frame it will buffer.
MAX_EXT_DEPTH = 100
MAX_FRAME = 256 * 1024 * 1024
# How many keys of one map (elements of one set) may share a hash when decoding.
MAX_SHARED_HASH = 64
# The reader's bounds on one msgpack object, in msgpack's own option names: every
# unpacker of a log takes these, so each limit is spelled once and checked alike.
UNPACK_LIMITS: dict[str, int] = {
    "max_str_len": MAX_STR,
    "max_bin_len": MAX_STR,
    "max_array_len": MAX_ITEMS,
    "max_map_len": MAX_ITEMS,
    "max_ext_len": MAX_FRAME,
}
# msgpack's own nesting limit: past it, msgpack raises StackError.
MSGPACK_STACK_DEPTH = 1024
_LIMIT_NAME = re.compile(r"exceeds (max_[a-z_]+)\(")
_MAP16, _MAP32 = b"\xde", b"\xdf"

_CANONICAL_NAN = b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"


# ---------------------------------------------------------------------------
# msgpack primitives, canonical (smallest form, as msgpack-python writes them).


def _pack_int(n: int, out: bytearray) -> bool:
    """Append n as a msgpack int; False when it needs the big-int ext."""
    if 0 <= n < 0x80:
        out.append(n)
    elif -0x20 <= n < 0:
        out.append(n & 0xFF)
    elif n >= 0:
        if n <= 0xFF:
            out += b"\xcc" + n.to_bytes(1, "big")
        elif n <= 0xFFFF:
            out += b"\xcd" + n.to_bytes(2, "big")
        elif n <= 0xFFFFFFFF:
            out += b"\xce" + n.to_bytes(4, "big")
        elif n <= 0xFFFFFFFFFFFFFFFF:
            out += b"\xcf" + n.to_bytes(8, "big")
        else:
            return False
    elif n >= -0x80:
        out += b"\xd0" + n.to_bytes(1, "big", signed=True)
    elif n >= -0x8000:
        out += b"\xd1" + n.to_bytes(2, "big", signed=True)
    elif n >= -0x80000000:
        out += b"\xd2" + n.to_bytes(4, "big", signed=True)
    elif n >= -0x8000000000000000:
        out += b"\xd3" + n.to_bytes(8, "big", signed=True)
    else:
        return False
    return True


def _pack_field_int(n: Any, out: bytearray) -> None:
    """Append an int field of an event frame or a marker; it must fit the 64-bit forms."""
    if not isinstance(n, int):
        raise TypeError(f"expected an int, got {type(n).__name__}")
    if not _pack_int(n, out):
        raise OverflowError(f"{n} does not fit in 64 bits")


def _exact_str(text: Any) -> str:
    """`text` as an exact str: a subclass's overrides never change what is written."""
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    return str.__str__(text)


def _pack_str_header(size: int, out: bytearray) -> None:
    if size < 32:
        out.append(0xA0 | size)
    elif size <= 0xFF:
        out += b"\xd9" + size.to_bytes(1, "big")
    elif size <= 0xFFFF:
        out += b"\xda" + size.to_bytes(2, "big")
    else:
        out += b"\xdb" + size.to_bytes(4, "big")


def _pack_bin(data: bytes, out: bytearray) -> None:
    size = len(data)
    if size <= 0xFF:
        out += b"\xc4" + size.to_bytes(1, "big")
    elif size <= 0xFFFF:
        out += b"\xc5" + size.to_bytes(2, "big")
    else:
        out += b"\xc6" + size.to_bytes(4, "big")
    out += data


def _pack_array_header(size: int, out: bytearray) -> None:
    if size < 16:
        out.append(0x90 | size)
    elif size <= 0xFFFF:
        out += b"\xdc" + size.to_bytes(2, "big")
    else:
        out += b"\xdd" + size.to_bytes(4, "big")


def _pack_map_header(size: int, out: bytearray) -> None:
    if size < 16:
        out.append(0x80 | size)
    elif size <= 0xFFFF:
        out += b"\xde" + size.to_bytes(2, "big")
    else:
        out += b"\xdf" + size.to_bytes(4, "big")


_FIXEXT = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}
# The header of an ext payload of each size up to 255 (before its code): a fixext of its
# size, else ext 8. Nearly every ext callpin writes is that small.
_SMALL_EXT_HEAD = tuple(
    bytes((_FIXEXT[size],)) if size in _FIXEXT else b"\xc7" + size.to_bytes(1, "big") for size in range(0x100)
)


def _pack_ext(code: int, payload: bytes | bytearray, out: bytearray) -> None:
    size = len(payload)
    if size <= 0xFF:
        out += _SMALL_EXT_HEAD[size]
    elif size <= 0xFFFF:
        out += b"\xc8" + size.to_bytes(2, "big")
    else:
        out += b"\xc9" + size.to_bytes(4, "big")
    out.append(code)
    out += payload


# The first bytes of a map: how encode_event sees that a kwargs field of another type than
# dict was written as a map.
_MAP_HEAD = tuple(0x80 <= byte <= 0x8F or byte in (0xDE, 0xDF) for byte in range(256))


def _lost(reason: str) -> bytes:
    """The marker written, as constant bytes, where not even a value's own marker could be."""
    payload = bytearray(b"\x92\xa5value")
    data = reason.encode("ascii")
    payload.append(0xA0 | len(data))
    payload += data
    out = bytearray()
    _pack_ext(EXT_UNENCODABLE, payload, out)
    return bytes(out)


_LOST_RECURSION = _lost("RecursionError")
_LOST_OTHER = _lost("encoding failed")


# ---------------------------------------------------------------------------
# The encoder.

_NORMAL, _SHAPE, _RAW = 0, 1, 2

# The texts an encoder has seen no rule of its set can change are kept with their bytes:
# labels, keyword and key names and the values that recur (a currency, a status) are
# then written with one lookup. Short texts only, and a bounded number per encoder.
_PLAIN_LONGEST = 64
_PLAIN_KEPT = 4096
# The event frames kept by (kind, label, thread, depth), for events whose value and error
# are None (every call event and a return of None): see encode_event.
_FRAMES_KEPT = 4096

# The start of a placeholder's payload, `[name, `, for the placeholders values are
# replaced with outside of text (text rules go through normalize_text).
_PLACEHOLDER_HEADS = {name: b"\x92" + bytes((0xA0 | len(name),)) + name.encode() for name in ("uuid", "ts", "secret")}
# A placeholder's bytes up to its number, by the length of the number's packed bytes
# (1 to 9): the ext header of the payload's size, its code and the payload's start.
_PLACEHOLDER_STARTS = {
    name: tuple(_SMALL_EXT_HEAD[len(start) + size] + bytes((EXT_PLACEHOLDER,)) + start for size in range(10))
    for name, start in _PLACEHOLDER_HEADS.items()
}
# Each byte value as a one-byte bytes.
_BYTE = tuple(bytes((value,)) for value in range(0x100))


def sorted_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments sorted by name: their order at a call site carries no meaning.

    Names are compared as the plain text they hold, so a `str` subclass's own
    comparisons never decide the order, nor raise into the call being recorded.
    Keywords already in order (as `str` names) are returned as they are, not copied.
    """
    if len(kwargs) < 2:
        return kwargs
    in_order = True
    previous = ""
    for name in kwargs:
        if type(name) is not str:
            return dict(sorted(kwargs.items(), key=_keyword_name))
        if name < previous:
            in_order = False
        previous = name
    if in_order:
        return kwargs
    # Plain str names, all different: the pairs are ordered by their names alone,
    # compared by the interpreter with no key function called.
    return dict(sorted(kwargs.items()))


def _keyword_name(item: tuple[Any, Any]) -> Any:
    name = item[0]
    return str.__str__(name) if isinstance(name, str) else name


class Encoder:
    """Canonical encoder with normalization; one per log (it owns the numbering).

    Not thread-safe: the recorder serializes calls. The C `_speedups.Encoder` has the
    same constructor, methods and bytes.

    How a value is written: `_value` looks its exact type up in `_HANDLERS` (after three
    shortcuts for the commonest values: a text written before, an int of the 64-bit forms,
    None); types it does not know go through `canonical_form`. Each handler writes msgpack
    into `out`. Everything a value's handling reads from the rules is read once, when the
    rules are assigned (docs/speedups.md, "The pure-Python path").
    """

    def __init__(self, rules: RuleSet = DEFAULT_RULES) -> None:
        self.numbering = Numbering()
        self._stack: list[int] = []
        self._mode = _NORMAL
        # The instance numbers of this log's objects, shared with its receivers.
        self.identities = Identities()
        # How many object states enclose the value being written, and how many may
        # (MAX_OBJECT_DEPTH; 1 while an object over the budget is written shallow).
        self._objects = 0
        self._object_depth: int | None = None
        # The state budget of an outermost object; None (`state_digest`'s encoder): none.
        self._budget: int | None = OBJECT_BUDGET
        # msgpack's packer writes an int of the 64-bit forms and a float exactly as the
        # canonical form has them (the smallest form; float 64), in one call.
        self._pack: Callable[[Any], bytes] = msgpack.Packer().pack
        self.rules = rules

    @property
    def rules(self) -> RuleSet:
        """The normalization rules: assigning others applies them from the next value written."""
        return self._rules

    @rules.setter
    def rules(self, rules: RuleSet) -> None:
        self._rules = rules
        self._normalizing = bool(rules)
        self._builtin_text = bool(getattr(rules, "_builtin_only", False))
        self._redacting = bool(getattr(rules, "key_rules", ()))
        # Texts that no rule of `rules` can change, with their bytes (see _str), and
        # whether the value under each name asked about is redacted (see _secret_key).
        self._plain: dict[str, bytes] = {}
        self._secret_names: dict[str, bool] = {}
        # Of those texts, the keyword names whose values are not redacted, and those whose
        # values are (see encode_call).
        self._keywords: dict[str, bytes] = {}
        self._redacted_keywords: dict[str, bytes] = {}
        # The bytes around the args and kwargs of events whose value and error are None,
        # by (kind, label, thread, depth): see encode_event. With them, whether encode_call
        # has met the frame's keywords out of order (it sorts them first from then on).
        self._frames: dict[tuple[int, str, int, int], tuple[bytes, bytes, bytes, bool]] = {}

    # -- public --------------------------------------------------------------------

    def encode(self, value: Any) -> bytes:
        """The canonical bytes of one value, normalized with this encoder's numbering."""
        out = bytearray()
        self._value(value, out, 0)
        return bytes(out)

    def encode_whole(self, value: Any, levels: int) -> bytes:
        """`value` with no state budget, as written `levels` object states deep (`state_digest`)."""
        if not 0 <= levels <= MAX_OBJECT_DEPTH:
            raise ValueError("encode_whole(): levels out of range")
        budget, objects = self._budget, self._objects
        self._budget, self._objects = None, levels
        try:
            return self.encode(value)
        finally:
            self._budget, self._objects = budget, objects

    def encode_event(
        self,
        kind: int,
        label: str,
        args: Iterable[Any],
        kwargs: dict[str, Any],
        value: Any,
        error: tuple[str, str] | None,
        thread: int,
        depth: int,
    ) -> bytes:
        """One event frame: `[kind, label, args, kwargs, value, error, thread, depth]`.

        An event whose value and error are None (every call, a return of None) is written
        around its args and kwargs from the bytes kept for its kind, label, thread and
        depth, when its label is a kept text (its bytes then never change while the rules
        stay); with no args and kwargs either, the whole frame is kept.
        """
        # The table of the rules this event starts under: assigned others while it is
        # written (by a registered form), its frame goes to the table they replaced.
        frames = self._frames
        kept = None
        if value is None and error is None and type(label) is str:
            kept = frames.get((kind, label, thread, depth))
        # type(): a bool or an int subclass equal to an int would find the int's frame.
        if kept is not None and type(kind) is type(thread) is type(depth) is int:
            kept_head, kept_tail, kept_empty, _ = kept
            if type(args) is tuple and type(kwargs) is dict:
                if not args and not kwargs:
                    return kept_empty
                # Under a lower MAX_ITEMS the general path writes the same bytes.
                # Keywords in order: encode_call writes them as they are.
                if len(args) < 16 > len(kwargs) and MAX_ITEMS >= 15 and sorted_keywords(kwargs) is kwargs:
                    return self.encode_call(kind, label, args, kwargs, thread, depth)
            return self._framed(kept_head, args, kwargs, kept_tail)
        # The int fields of an event are small: one byte each, written here without
        # the general packing (which the rest still get).
        out = bytearray((FRAME_HEAD,))
        if type(kind) is int and 0 <= kind < 0x80:
            out.append(kind)
        else:
            _pack_field_int(kind, out)
        self._str(label, out)
        head = len(out)
        self._call_fields(args, kwargs, out)
        tail = len(out)
        if value is None:
            out.append(0xC0)
        else:
            self._field(value, out)
        if error is None:
            out.append(0xC0)
        else:
            out.append(0x92)
            self._error_text(error[0], out, reprs=False)
            self._error_text(error[1], out, reprs=True)
        if type(thread) is int and 0 <= thread < 0x80:
            out.append(thread)
        else:
            _pack_field_int(thread, out)
        if type(depth) is int and 0 <= depth < 0x80:
            out.append(depth)
        else:
            _pack_field_int(depth, out)
        frame = bytes(out)
        if (
            value is None
            and error is None
            and type(kind) is int
            and type(thread) is int
            and type(depth) is int
            and type(label) is str
            and label in self._plain  # its bytes are the same for every event
            and len(frames) < _FRAMES_KEPT
        ):
            frames[(kind, label, thread, depth)] = (
                frame[:head],
                frame[tail:],
                frame[:head] + b"\x90\x80" + frame[tail:],
                False,
            )
        return frame

    def encode_call(
        self, kind: int, label: str, args: tuple[Any, ...], kwargs: dict[str, Any], thread: int, depth: int
    ) -> bytes:
        """`encode_event(kind, label, args, sorted_keywords(kwargs), None, None, thread, depth)`.

        A journal's event with no outcome, its keywords in name order whatever their
        order at the call site, which carries no meaning. For callers whose kind, thread
        and depth are ints, args a tuple and kwargs a dict (`Journal.emit`'s own). An
        event around a kept frame, with fewer than 16 args and 16 kwargs within
        MAX_ITEMS, is written here in two loops: the fields exactly as `_call_fields`
        writes them, the values of nearly every call (a kept text, an int of the 64-bit
        forms, None) with no call, a bool or a uuid in `_call_value`, anything else by
        `_value`. A field whose writing raised is written again item by item, as
        `_call_fields` does. Anything else, and an event written while another value is
        (a registered form that records), is encode_event's.

        The event is gathered as a list of its pieces and joined once: a list's append
        costs a fraction of a bytearray's `+=`.
        """
        # The table of the rules this event starts under (see encode_event).
        frames = self._frames
        kept = frames.get((kind, label, thread, depth)) if type(label) is str else None
        if kept is None or not len(args) < 16 > len(kwargs) or MAX_ITEMS < 15:
            return self.encode_event(kind, label, args, sorted_keywords(kwargs), None, None, thread, depth)
        if not args and not kwargs:
            return kept[2]
        if self._stack or self._mode != _NORMAL:
            return self._framed(kept[0], args, sorted_keywords(kwargs), kept[1])
        if kept[3]:
            kwargs = sorted_keywords(kwargs)
        plain = self._plain
        keywords = self._keywords
        redacted = self._redacted_keywords
        pack = self._pack
        byte = _BYTE
        # bytes, and in the kwargs field for a while a value that waits (below)
        parts: list[Any] = [kept[0], byte[0x90 | len(args)]]
        try:
            for item in args:
                cls = type(item)
                known = plain.get(item) if cls is str else None
                if known is not None:
                    parts.append(known)
                elif cls is int and -0x20 <= item < 0x80:
                    parts.append(byte[item & 0xFF])
                elif cls is int and -0x8000_0000_0000_0000 <= item <= 0xFFFF_FFFF_FFFF_FFFF:
                    parts.append(pack(item))
                elif item is None:
                    parts.append(b"\xc0")
                else:
                    parts.append(self._call_value(item, None))
        except Exception as exc:
            exc.__traceback__ = None
            out = bytearray()
            self._items_field(list(args), out)
            parts[1:] = (out,)
        start = len(parts)
        parts.append(byte[0x80 | len(kwargs)])
        # The names are compared as they are written. A value that is numbered (a uuid,
        # an object, a redacted value) waits in its place until every name is known to be
        # in order: written in another order, it could take a number an earlier name's
        # value should have. A redacted one waits as the complement of its place. Names
        # out of order are written once more sorted, and sorted first for this frame from
        # then on; a name not kept (new, or not a kept text) sends the field to the
        # general path.
        retried = False
        while True:
            waiting: list[int] = []
            previous = ""
            complete = True
            for key, item in kwargs.items():
                known = keywords.get(key) if type(key) is str else None
                if known is None or key < previous:
                    known = redacted.get(key) if type(key) is str else None
                    if known is None or key < previous:
                        complete = False
                        break
                    previous = key
                    parts.append(known)
                    waiting.append(~len(parts))
                    parts.append(item)
                    continue
                previous = key
                parts.append(known)
                cls = type(item)
                known = plain.get(item) if cls is str else None
                if known is not None:
                    parts.append(known)
                elif cls is int and -0x20 <= item < 0x80:
                    parts.append(byte[item & 0xFF])
                elif cls is int and -0x8000_0000_0000_0000 <= item <= 0xFFFF_FFFF_FFFF_FFFF:
                    parts.append(pack(item))
                elif item is None:
                    parts.append(b"\xc0")
                else:
                    waiting.append(len(parts))
                    parts.append(item)
            if complete:
                break
            del parts[start + 1 :]
            ordered = sorted_keywords(kwargs)
            if ordered is kwargs or retried:
                parts[start:] = (self._keywords_field(kwargs),)
                waiting = []
                break
            frames[kind, label, thread, depth] = (*kept[:3], True)
            kwargs = ordered
            retried = True
        if waiting:
            try:
                for index in waiting:
                    if index < 0:
                        parts[~index] = self._keyword_value(self._secret, parts[~index], kwargs)
                    else:
                        parts[index] = self._call_value(parts[index], kwargs)
            except Exception as exc:
                exc.__traceback__ = None
                out = bytearray()
                self._pairs_field(kwargs, out)
                parts[start:] = (out,)
        parts.append(kept[1])
        return b"".join(parts)

    def _keywords_field(self, kwargs: dict[str, Any]) -> bytearray:
        """The kwargs field of `encode_call`, given in name order, written as `_call_fields` writes it.

        For a name kept in neither `_keywords` nor `_redacted_keywords`. A name that is a
        kept text is kept in the one its value's redaction says, with its bytes: the next
        call writes it with one lookup.
        """
        out = bytearray()
        self._kwargs_field(kwargs, out)
        for key in kwargs:
            if type(key) is str and len(self._keywords) + len(self._redacted_keywords) < _PLAIN_KEPT:
                known = self._plain.get(key)
                if known is not None:
                    kept = self._redacted_keywords if self._secret_key(key) else self._keywords
                    kept[key] = known
        return out

    def _call_value(self, item: Any, container: Any) -> bytes | bytearray:
        """The bytes of an item of the args or kwargs field (`container`: the kwargs, else None).

        A bool or a uuid is written here as `_value` would; anything else by `_value`,
        with the kwargs on the cycle stack as `_dict` has them (the args list written
        by `_call_fields` is new: nothing can hold it).
        """
        cls = type(item)
        if cls is bool:
            return b"\xc3" if item else b"\xc2"
        # In normal mode, as encode_call's flat path is.
        if cls is _uuid.UUID and self._rules.uuid:
            key = item.int
            if type(key) is int and 0 <= key < _UUID_END:
                return self._placeholder_bytes("uuid", key)
        if container is not None:
            return self._keyword_value(self._value, item, container)
        out = bytearray()
        self._value(item, out, 1)
        return out

    def _keyword_value(
        self, write: Callable[[Any, bytearray, int], None], item: Any, kwargs: dict[str, Any]
    ) -> bytearray:
        """The bytes `write` (`_value`, `_secret`) gives a keyword argument's value, the kwargs on the cycle stack."""
        out = bytearray()
        stack = self._stack
        stack.append(id(kwargs))
        try:
            write(item, out, 1)
        finally:
            stack.pop()
        return out

    def _framed(self, head: bytes, args: Iterable[Any], kwargs: dict[str, Any], tail: bytes) -> bytes:
        """An event from its kept head (up to the label) and tail (value to depth)."""
        out = bytearray(head)
        self._call_fields(args, kwargs, out)
        out += tail
        return bytes(out)

    def _call_fields(self, args: Iterable[Any], kwargs: dict[str, Any], out: bytearray) -> None:
        """An event's args and kwargs fields.

        The args field is an array and the kwargs field a map whatever the values do:
        a value that cannot be encoded is a marker in its own place (see _field).
        Written as a list and a dict are, or, when that fails as a whole (where _value
        would have written one marker for the field), item by item. Empty ones (every
        return, raise and mark) are one byte.
        """
        items = list(args)
        if not items:
            out.append(0x90)
        elif len(items) > MAX_ITEMS or not self._whole_field(self._args, items, out):
            self._items_field(items, out)
        self._kwargs_field(kwargs, out)

    def _kwargs_field(self, kwargs: dict[str, Any], out: bytearray) -> None:
        """An event's kwargs field (see `_call_fields`)."""
        if type(kwargs) is not dict:
            start = len(out)
            self._field(kwargs, out)
            written = _MAP_HEAD[out[start]]
            if not written:
                del out[start:]
        elif kwargs:
            written = self._whole_field(self._dict, kwargs, out)
        else:
            out.append(0x80)
            written = True
        if not written:
            self._pairs_field(kwargs, out)

    def _field(self, obj: Any, out: bytearray, depth: int = 0) -> None:
        """One field's value at depth 0, or a marker in its place when even marking failed.

        `_value` marks a value it cannot encode; at the edge of the stack (a spied call
        made deep in a recursion) or out of memory, writing the marker can fail too, and
        the exception would reach the enclosing container, which then becomes the marker:
        the whole args array, and the event would no longer be an event. Here the failure
        stops: a constant marker, which needs no call to write. `depth` is 1 for an item
        of the args or kwargs field written on its own (`_items_field`, `_pairs_field`).
        """
        start = len(out)
        try:
            self._value(obj, out, depth)
        except Exception as exc:
            exc.__traceback__ = None
            del out[start:]
            out += _LOST_RECURSION if type(exc) is RecursionError else _LOST_OTHER

    def _whole_field(self, write: Callable[[Any, bytearray, int], None], obj: Any, out: bytearray) -> bool:
        """Write a field's container at depth 0 with its handler; False, and nothing written, when it failed."""
        start = len(out)
        try:
            write(obj, out, 0)
        except Exception as exc:
            exc.__traceback__ = None
            del out[start:]
            return False
        return True

    def _args(self, items: list[Any], out: bytearray, depth: int) -> None:
        """The args field's items, as `_list` writes them: the list is encode_event's own, so no
        value can hold it (it needs no place on the cycle stack) and none changes its size."""
        size = len(items)
        if size < 16:
            out.append(0x90 | size)
        else:
            _pack_array_header(size, out)
        value = self._value
        plain = self._plain
        for item in items:
            known = plain.get(item) if type(item) is str else None
            if known is None:
                value(item, out, 1)
            else:
                out += known

    def _items_field(self, items: list[Any], out: bytearray) -> None:
        """The args field when the list as a whole could not be encoded: each item in its place."""
        if len(items) > MAX_ITEMS:
            out.append(0x91)
            self._field(Unencodable(qualified_name(list), f"{len(items)} items exceed the limit of {MAX_ITEMS}"), out)
            return
        _pack_array_header(len(items), out)
        for item in items:
            self._field(item, out, 1)

    def _pairs_field(self, kwargs: dict[str, Any], out: bytearray) -> None:
        """The kwargs field when the dict as a whole could not be encoded: each value in its place.

        Keyword names are identifiers; one that cannot be normalized is written as it is.
        """
        if len(kwargs) > MAX_ITEMS:
            _pack_map_header(1, out)
            self._plain_str("**kwargs", out)
            self._field(Unencodable(qualified_name(dict), f"{len(kwargs)} items exceed the limit of {MAX_ITEMS}"), out)
            return
        _pack_map_header(len(kwargs), out)
        for key, item in kwargs.items():
            start = len(out)
            try:
                self._str(key, out)
            except Exception as exc:
                exc.__traceback__ = None
                del out[start:]
                data = str.__str__(key).encode("utf-8", "backslashreplace")
                _pack_str_header(len(data), out)
                out += data
            self._keyword_field(key, item, out)

    def _keyword_field(self, key: str, item: Any, out: bytearray) -> None:
        """A keyword argument's value written on its own (redacted when its name says secret)."""
        start = len(out)
        try:
            if self._secret_key(key):
                self._secret(item, out, 1)
                return
        except Exception as exc:
            exc.__traceback__ = None
            del out[start:]
            out += _LOST_RECURSION if type(exc) is RecursionError else _LOST_OTHER
            return
        self._field(item, out, 1)

    def _error_text(self, text: str, out: bytearray, *, reprs: bool) -> None:
        # A raise event must be written whatever the exception's message: one past the
        # size limit is replaced by a text saying so (the field is a str, not a value).
        start = len(out)
        try:
            self._str(text, out, reprs=reprs)
        except TooLarge as exc:
            del out[start:]
            self._plain_str(f"<unencodable str: {exc}>", out)

    # -- values ----------------------------------------------------------------------

    def _value(self, obj: Any, out: bytearray, depth: int) -> None:
        cls = type(obj)
        # The commonest values first, as their handlers would write them: a text written
        # before that no rule changes, an int of the 64-bit forms, None.
        if cls is str:
            known = self._plain.get(obj)
            if known is not None:
                out += known
                return
        elif cls is int:
            if -0x20 <= obj < 0x80:
                out.append(obj & 0xFF)
                return
            if -0x8000_0000_0000_0000 <= obj <= 0xFFFF_FFFF_FFFF_FFFF:
                out += self._pack(obj)
                return
        elif obj is None:
            out.append(0xC0)
            return
        start = len(out)
        try:
            handler = _HANDLERS.get(cls)
            # Only values that nest count against the depth limit; scalars and the
            # leaf markers are written at any depth (a decoded marker re-encodes as itself).
            if depth > MAX_DEPTH and (handler is None or cls in _NESTING):
                self._unencodable(cls, f"nested deeper than {MAX_DEPTH}", out)
                return
            if handler is not None:
                handler(self, obj, out, depth)
                return
            ident = id(obj)
            if ident in self._stack:
                self._cycle(ident, out)
                return
            self._stack.append(ident)
            try:
                form = canonical_form(obj)
                if type(form) is ObjectState:
                    self._object(obj, form, out, depth)
                    return
                if type(form) is Instance:
                    self._instance(self.identities.instance(obj, form.type, peek=self._mode != _NORMAL), out, depth)
                    return
                handler = _HANDLERS.get(type(form))
                if handler is None:
                    raise TypeError(f"canonical form of {type(obj)!r} is {type(form)!r}")
                if type(form) is Opaque and self._mode == _NORMAL and "0x" in form.repr:
                    self.identities.kept[ident] = obj
                handler(self, form, out, depth)
            finally:
                self._stack.pop()
        except Exception as exc:
            # Swallowed, so its traceback goes too: kept, it holds the failed call's frames,
            # and one exception instance raised by every repr grows by an entry per encode.
            exc.__traceback__ = None
            del out[start:]
            reason = str(exc) if isinstance(exc, TooLarge) else type(exc).__name__
            self._unencodable(type(obj), reason, out)

    def _object(self, obj: Any, form: ObjectState, out: bytearray, depth: int) -> None:
        """An object by its state, numbered by its identity; by identity alone past the depth,
        shallow or by identity alone past the budget."""
        instance = self.identities.instance(obj, form.type, peek=self._mode != _NORMAL)
        limit = MAX_OBJECT_DEPTH if self._object_depth is None else self._object_depth
        if self._objects >= limit:
            # An object inside the state of one written shallow is cut by the budget; one
            # past the depth carries the digest of its state, except inside a digest's
            # own writing (no budget), which stops there.
            if self._object_depth is not None:
                self._cut(obj, instance, EXT_OVER_BUDGET, out)
            elif self._budget is None:
                self._identity_alone(instance, False, out)
            else:
                self._cut(obj, instance, EXT_PAST_DEPTH, out)
            return
        state = ObjectState(form.type, instance.number, form.fields)
        if self._objects != 0 or self._budget is None:
            self._object_state(state, out, depth)
            return
        # Measured without normalization (nor numbering anything): the choice is the same
        # whichever rules apply, so normalizing a log later gives the bytes recording with
        # the rules gives. Over the budget, the object is written shallow (the objects in
        # its attributes by identity), so its own values stay pinned; when even that is
        # over, by identity alone.
        measured = self._encode_in_mode(state, _RAW, depth)
        try:
            shallow = len(measured) > OBJECT_BUDGET
            if shallow:
                self._object_depth = 1
                measured = self._encode_in_mode(state, _RAW, depth)
            alone = len(measured) > OBJECT_BUDGET
            if shallow and self._mode == _NORMAL:
                self.identities.note_past_budget(form.type, "identity" if alone else "shallow")
            if alone:
                self._cut(obj, instance, EXT_OVER_BUDGET, out)
            elif self._mode == _RAW:
                out += measured
            else:
                self._object_state(state, out, depth)
        finally:
            self._object_depth = None

    def _secret_key(self, key: Any) -> bool:
        """True when the value under `key` (a map key, keyword, attribute or field name) is redacted."""
        if not self._redacting or self._mode == _RAW or not isinstance(key, str):
            return False
        # A str subclass is asked as the text it holds: its own hash and comparisons never run.
        name = str.__str__(key)
        known = self._secret_names.get(name)
        if known is None:
            known = bool(self._rules.secret_key(name))
            if len(self._secret_names) < _PLAIN_KEPT:
                self._secret_names[name] = known
        return known

    def _secret(self, value: Any, out: bytearray, depth: int) -> None:
        """A redacted value: `<secret:N>`, numbered by a str's text, anything else's bytes (None stays None)."""
        if value is None:
            out.append(0xC0)
            return
        key = value if type(value) is str else "\x00" + self._encode_in_mode(value, _RAW, depth).hex()
        self._placeholder("secret", key, out)

    def _unencodable(self, cls: type, reason: str, out: bytearray) -> None:
        payload = bytearray(b"\x92")
        self._str(qualified_name(cls), payload)
        self._str(reason, payload)
        _pack_ext(EXT_UNENCODABLE, payload, out)

    def _cycle(self, ident: int, out: bytearray) -> None:
        up = len(self._stack) - self._stack.index(ident)
        payload = bytearray()
        _pack_int(up, payload)
        _pack_ext(EXT_CYCLE, payload, out)

    def _enter(self, obj: Any, out: bytearray) -> bool:
        """Push a container; False (and a cycle marker written) when it is already open."""
        ident = id(obj)
        if ident in self._stack:
            self._cycle(ident, out)
            return False
        self._stack.append(ident)
        return True

    def _none(self, obj: None, out: bytearray, depth: int) -> None:
        out.append(0xC0)

    def _bool(self, obj: bool, out: bytearray, depth: int) -> None:
        out.append(0xC3 if obj else 0xC2)

    def _int(self, obj: int, out: bytearray, depth: int) -> None:
        if -0x8000_0000_0000_0000 <= obj <= 0xFFFF_FFFF_FFFF_FFFF:
            out += self._pack(obj)
        else:
            size = (obj.bit_length() + 8) // 8
            _pack_ext(EXT_BIGINT, obj.to_bytes(size, "big", signed=True), out)

    def _float(self, obj: float, out: bytearray, depth: int) -> None:
        if obj != obj:
            out += _CANONICAL_NAN
        else:
            out += self._pack(obj)

    def _str(self, obj: str, out: bytearray, depth: int = 0, *, reprs: bool = False) -> None:
        if type(obj) is not str:
            obj = _exact_str(obj)
        if not reprs:
            known = self._plain.get(obj)
            if known is not None:
                out += known
                return
        rules = self._rules
        # normalize_text returns a text untouched when only built-in rules apply and it
        # lacks every text they need (may_match); that common case skips the call, and
        # such a text, written the same whatever the numbering, is kept with its bytes.
        if self._normalizing and (not self._builtin_text or may_match(obj, rules, reprs)):
            if self._mode != _RAW:
                obj = normalize_text(obj, rules, self.numbering, reprs=reprs, peek=self._mode == _SHAPE)
        elif not reprs and len(obj) <= _PLAIN_LONGEST and len(self._plain) < _PLAIN_KEPT:
            start = len(out)
            self._text(obj, out)
            self._plain[obj] = bytes(out[start:])
            return
        self._text(obj, out)

    def _text(self, obj: str, out: bytearray) -> None:
        """A str as msgpack str (or, with lone surrogates, ext 18), as it is."""
        try:
            data = obj.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates are not UTF-8; keep them exactly, in their own ext.
            data = obj.encode("utf-8", "surrogatepass")
            self._check_size(len(data), str)
            _pack_ext(EXT_SURROGATE_STR, data, out)
            return
        size = len(data)
        if size < 32:
            out.append(0xA0 | size)
        else:
            self._check_size(size, str)
            _pack_str_header(size, out)
        out += data

    def _check_size(self, size: int, cls: type) -> None:
        if size > MAX_STR:
            raise TooLarge(f"{cls.__name__} of {size} bytes exceeds the limit of {MAX_STR}")

    def _bytes(self, obj: bytes, out: bytearray, depth: int) -> None:
        self._check_size(len(obj), bytes)
        if obj and self._normalizing and self._mode != _RAW:
            # Bytes that are UTF-8 text (a request body) get the text rules, and stay bytes.
            try:
                text = obj.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                obj = self._normalized_text(text)
        _pack_bin(obj, out)

    def _normalized_text(self, text: str) -> bytes:
        """The UTF-8 of `text` with the text rules applied, as `_str` writes it (without its header)."""
        piece = bytearray()
        self._str(text, piece)
        head = piece[0]
        start = 1 if head < 0xD9 else 2 if head == 0xD9 else 3 if head == 0xDA else 5
        return bytes(piece[start:])

    def _list(self, obj: list[Any], out: bytearray, depth: int) -> None:
        size = len(obj)
        if size > MAX_ITEMS:
            raise TooLarge(f"{size} items exceed the limit of {MAX_ITEMS}")
        # _enter, written out here and in _dict: these two are most of the containers written.
        stack = self._stack
        if id(obj) in stack:
            self._cycle(id(obj), out)
            return
        stack.append(id(obj))
        try:
            # The header is written first: a list that a callback grows or shrinks
            # while it is encoded would no longer match it (a growing one might never
            # end), so it is marked instead, as a dict is.
            if size < 16:
                out.append(0x90 | size)
            else:
                _pack_array_header(size, out)
            value = self._value
            plain = self._plain
            depth += 1
            for item in obj:
                if len(obj) != size:
                    break
                # A text written before is the commonest item: written here without a call.
                known = plain.get(item) if type(item) is str else None
                if known is None:
                    value(item, out, depth)
                else:
                    out += known
            if len(obj) != size:
                raise RuntimeError("list changed size during iteration")
        finally:
            stack.pop()

    def _dict(self, obj: dict[Any, Any], out: bytearray, depth: int) -> None:
        size = len(obj)
        if size > MAX_ITEMS:
            raise TooLarge(f"{size} items exceed the limit of {MAX_ITEMS}")
        stack = self._stack
        if id(obj) in stack:
            self._cycle(id(obj), out)
            return
        stack.append(id(obj))
        try:
            if size < 16:
                out.append(0x80 | size)
            else:
                _pack_map_header(size, out)
            value = self._value
            plain = self._plain
            # The redaction of each str key, known once per name: None when nothing is redacted.
            secret_names = self._secret_names if self._redacting and self._mode != _RAW else None
            named = self._dict_named_secret(obj) if secret_names is not None and size > 1 else None
            depth += 1
            for key, item in obj.items():
                if type(key) is str:
                    known = plain.get(key)
                    if known is None:
                        value(key, out, depth)
                    else:
                        out += known
                    secret = secret_names is not None and (key == named or secret_names.get(key))
                    if secret is None:
                        secret = self._secret_key(key)
                else:
                    value(key, out, depth)
                    secret = secret_names is not None and self._secret_key(key)
                if secret:
                    self._secret(item, out, depth)
                    continue
                known = plain.get(item) if type(item) is str else None
                if known is None:
                    value(item, out, depth)
                else:
                    out += known
        finally:
            stack.pop()

    def _dict_named_secret(self, obj: dict[Any, Any]) -> str | None:
        """The key of a map's value that its neighbour names as a secret: `value` under a
        `name` or `key` entry the rules call secret (`{"name": "DB_PASSWORD", "value": ...}`,
        a HAR header), `Value` under `Name` or `Key` (AWS tags); None when there is none."""
        for value_key, names in _NAMED_VALUES:
            if value_key in obj:
                for name in names:
                    entry = obj.get(name)
                    if isinstance(entry, str) and self._secret_key(entry):
                        return value_key
        return None

    def _fields_named_secret(self, fields: tuple[Any, ...]) -> int:
        """The index of a record's or object's field its neighbour names as a secret (as
        `_dict_named_secret`: an http.cookiejar.Cookie's `value` under `name='sessionid'`); -1."""
        if not self._redacting or self._mode == _RAW or len(fields) < 2:
            return -1
        for value_key, names in _NAMED_VALUES:
            for name in names:
                at, entry = -1, None
                for index, pair in enumerate(fields):
                    if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str:
                        continue
                    if pair[0] == value_key:
                        at = index
                    elif pair[0] == name:
                        entry = pair[1]
                if at >= 0 and isinstance(entry, str) and self._secret_key(entry):
                    return at
        return -1

    def _tuple(self, obj: tuple[Any, ...], out: bytearray, depth: int) -> None:
        if len(obj) > MAX_ITEMS:
            raise TooLarge(f"{len(obj)} items exceed the limit of {MAX_ITEMS}")
        if not self._enter(obj, out):
            return
        try:
            payload = bytearray()
            _pack_array_header(len(obj), payload)
            value = self._value
            depth += 1
            if len(obj) == 2 and self._secret_key(obj[0]):
                # A (name, value) pair under a secret name: a header in a list of them.
                value(obj[0], payload, depth)
                self._secret(obj[1], payload, depth)
            else:
                for item in obj:
                    value(item, payload, depth)
            _pack_ext(EXT_TUPLE, payload, out)
        finally:
            self._stack.pop()

    def _set(self, obj: set[Any] | frozenset[Any], out: bytearray, depth: int) -> None:
        if len(obj) > MAX_ITEMS:
            raise TooLarge(f"{len(obj)} items exceed the limit of {MAX_ITEMS}")
        if not self._enter(obj, out):
            return
        try:
            items = list(obj)
            payload = bytearray()
            _pack_array_header(len(items), payload)
            for encoded in self._sorted_elements(items, depth + 1):
                payload += encoded
            _pack_ext(EXT_FROZENSET if type(obj) is frozenset else EXT_SET, payload, out)
        finally:
            self._stack.pop()

    def _encode_in_mode(self, item: Any, mode: int, depth: int) -> bytes:
        saved, self._mode = self._mode, mode
        try:
            piece = bytearray()
            self._value(item, piece, depth)
            return bytes(piece)
        finally:
            self._mode = saved

    def _sorted_elements(self, items: list[Any], depth: int) -> list[bytes]:
        """Set elements in canonical order: sorted by their encoded bytes.

        With normalization the numbers a set's elements get must not depend on the
        set's iteration order (hash seed), so elements are first ordered by their
        *shape* (normalized, with values not yet numbered shown as 0, numbering left
        untouched), ties broken by their un-normalized bytes; they are then numbered
        in that order and finally sorted by their normalized bytes.
        """
        if not self._normalizing or self._mode != _NORMAL:
            return sorted(self._encode_in_mode(item, self._mode, depth) for item in items)
        keyed = [(self._encode_in_mode(item, _SHAPE, depth), index) for index, item in enumerate(items)]
        keyed.sort(key=lambda pair: pair[0])
        order: list[int] = []
        run_start = 0
        while run_start < len(keyed):
            run_end = run_start + 1
            while run_end < len(keyed) and keyed[run_end][0] == keyed[run_start][0]:
                run_end += 1
            run = [index for _, index in keyed[run_start:run_end]]
            if len(run) > 1:
                run.sort(key=lambda index: self._encode_in_mode(items[index], _RAW, depth))
            order.extend(run)
            run_start = run_end
        return sorted(self._encode_in_mode(items[index], _NORMAL, depth) for index in order)

    def _uuid(self, obj: _uuid.UUID, out: bytearray, depth: int) -> None:
        if self._rules.uuid and self._mode != _RAW:
            self._placeholder("uuid", uuid_key(obj), out)
        else:
            _pack_ext(EXT_UUID, obj.bytes, out)

    def _placeholder(self, name: str, key: str | int, out: bytearray) -> None:
        """`<name:N>` in place of a value (a uuid, a datetime, a secret), numbered by `key`."""
        out += self._placeholder_bytes(name, key)

    def _placeholder_bytes(self, name: str, key: str | int) -> bytes | bytearray:
        """The bytes of `<name:N>`, numbered by `key` (see `_placeholder`)."""
        numbering = self.numbering
        number = numbering.peek(name, key) if self._mode == _SHAPE else numbering.number(name, key)
        if type(number) is int:
            packed = self._pack(number)
            # A payload of at most 17 bytes: its ext header is one of the small ones.
            return _PLACEHOLDER_STARTS[name][len(packed)] + packed
        out = bytearray()
        self._write_placeholder(name, number, out)
        return out

    def _inert_placeholder(self, obj: Placeholder, out: bytearray, depth: int) -> None:
        self._write_placeholder(obj.name, obj.number, out)

    def _write_placeholder(self, name: str, number: int, out: bytearray) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(name, payload)
        _pack_field_int(number, payload)
        _pack_ext(EXT_PLACEHOLDER, payload, out)

    def _plain_str(self, text: str, out: bytearray) -> None:
        if type(text) is not str:
            text = _exact_str(text)
        data = text.encode("utf-8", "surrogatepass")
        _pack_str_header(len(data), out)
        out += data

    def _datetime(self, obj: _dt.datetime, out: bytearray, depth: int) -> None:
        if self._rules.timestamp and self._mode != _RAW:
            self._placeholder("ts", obj.isoformat(), out)
        else:
            _pack_ext(EXT_DATETIME, obj.isoformat().encode("ascii"), out)

    def _date(self, obj: _dt.date, out: bytearray, depth: int) -> None:
        _pack_ext(EXT_DATE, obj.isoformat().encode("ascii"), out)

    def _time(self, obj: _dt.time, out: bytearray, depth: int) -> None:
        _pack_ext(EXT_TIME, obj.isoformat().encode("ascii"), out)

    def _timedelta(self, obj: _dt.timedelta, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x93")
        _pack_int(obj.days, payload)
        _pack_int(obj.seconds, payload)
        _pack_int(obj.microseconds, payload)
        _pack_ext(EXT_TIMEDELTA, payload, out)

    def _decimal(self, obj: Decimal, out: bytearray, depth: int) -> None:
        # str() follows the thread's decimal context (capitals=0 writes 'e'); the
        # canonical form always uses 'E', and no other letter of a Decimal is an 'e'.
        _pack_ext(EXT_DECIMAL, str(obj).replace("e", "E").encode("ascii"), out)

    def _path(self, obj: pathlib.PurePosixPath, out: bytearray, depth: int) -> None:
        text = str(obj)
        data = text.encode("utf-8", "surrogatepass")
        self._check_size(len(data), str)
        if self._normalizing and self._mode != _RAW:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                pass  # lone surrogates: the path is written as it is
            else:
                # The text rules apply to a path too (a temporary folder's name becomes <tmp:N>).
                data = self._normalized_text(text)
        _pack_ext(EXT_PATH, data, out)

    def _record(self, obj: Record, out: bytearray, depth: int) -> None:
        if not self._enter(obj, out):
            return
        try:
            payload = bytearray(b"\x92")
            self._plain_str(obj.type, payload)
            fields = tuple(obj.fields)
            _pack_map_header(len(fields), payload)
            named = self._fields_named_secret(fields)
            for index, (name, value) in enumerate(fields):
                self._plain_str(name, payload)
                if index == named or self._secret_key(name):
                    self._secret(value, payload, depth + 1)
                else:
                    self._value(value, payload, depth + 1)
            _pack_ext(EXT_RECORD, payload, out)
        finally:
            self._stack.pop()

    def _object_state(self, obj: ObjectState, out: bytearray, depth: int) -> None:
        if not self._enter(obj, out):
            return
        self._objects += 1
        try:
            payload = bytearray(b"\x93")
            self._plain_str(obj.type, payload)
            _pack_field_int(obj.number, payload)
            fields = tuple(obj.fields)
            _pack_map_header(len(fields), payload)
            named = self._fields_named_secret(fields)
            for index, (name, value) in enumerate(fields):
                self._plain_str(name, payload)
                if index == named or self._secret_key(name):
                    self._secret(value, payload, depth + 1)
                else:
                    self._value(value, payload, depth + 1)
            _pack_ext(EXT_OBJECT, payload, out)
        finally:
            self._objects -= 1
            self._stack.pop()

    def _custom(self, obj: Custom, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        self._value(obj.value, payload, depth + 1)
        _pack_ext(EXT_CUSTOM, payload, out)

    def _enum(self, obj: EnumValue, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        self._plain_str(obj.name, payload)
        _pack_ext(EXT_ENUM, payload, out)

    def _exception(self, obj: ExceptionValue, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        args = tuple(obj.args)
        _pack_array_header(len(args), payload)
        for arg in args:
            self._value(arg, payload, depth + 1)
        _pack_ext(EXT_EXCEPTION, payload, out)

    def _cycle_value(self, obj: Cycle, out: bytearray, depth: int) -> None:
        payload = bytearray()
        _pack_field_int(obj.up, payload)
        _pack_ext(EXT_CYCLE, payload, out)

    def _opaque(self, obj: Opaque, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        self._str(obj.repr, payload, reprs=True)
        _pack_ext(EXT_OPAQUE, payload, out)

    def _unencodable_value(self, obj: Unencodable, out: bytearray, depth: int) -> None:
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        self._plain_str(obj.reason, payload)
        _pack_ext(EXT_UNENCODABLE, payload, out)

    def _instance(self, obj: Instance, out: bytearray, depth: int) -> None:
        if obj.digest is not None:
            self._digested(obj, obj.digest, EXT_OVER_BUDGET if obj.over_budget else EXT_PAST_DEPTH, out)
        else:
            self._identity_alone(obj, obj.over_budget, out)

    def _identity_alone(self, obj: Instance, over_budget: bool, out: bytearray) -> None:
        """An object's `Instance`: ext 20, or ext 23 as a 1.2 log has it (no digest)."""
        payload = bytearray(b"\x92")
        self._plain_str(obj.type, payload)
        _pack_field_int(obj.number, payload)
        _pack_ext(EXT_OVER_BUDGET if over_budget else EXT_INSTANCE, payload, out)

    def _cut(self, obj: Any, instance: Instance, code: int, out: bytearray) -> None:
        """An object the budget writes by identity (ext 23, the digest of its state as deep
        as the log would have written it), or one past the object depth (ext 24, the digest
        of its state written from it); zeros, of the same size, while measuring or ordering."""
        levels = 0 if code == EXT_PAST_DEPTH else self._objects
        digest = state_digest(obj, self._rules, levels) if self._mode == _NORMAL else _NO_DIGEST
        self._digested(instance, digest, code, out)

    def _digested(self, obj: Instance, digest: bytes, code: int, out: bytearray) -> None:
        """ext 23 or 24: [type, number, digest]."""
        payload = bytearray(b"\x93")
        self._plain_str(obj.type, payload)
        _pack_field_int(obj.number, payload)
        _pack_bin(digest, payload)
        _pack_ext(code, payload, out)

    def _pairs(self, obj: Pairs, out: bytearray, depth: int) -> None:
        items = tuple(obj.items)
        _pack_map_header(len(items), out)
        for key, value in items:
            self._value(key, out, depth + 1)
            if self._secret_key(key):
                self._secret(value, out, depth + 1)
            else:
                self._value(value, out, depth + 1)

    def _set_items(self, obj: SetItems, out: bytearray, depth: int) -> None:
        payload = bytearray()
        items = list(obj.items)
        _pack_array_header(len(items), payload)
        for encoded in self._sorted_elements(items, depth + 1):
            payload += encoded
        _pack_ext(EXT_FROZENSET if obj.frozen else EXT_SET, payload, out)


_NO_DIGEST = bytes(8)
# A value named a secret by its neighbour: the value entry, and the entries that name it.
_NAMED_VALUES = (("value", ("name", "key")), ("Value", ("Name", "Key")))


def state_digest(obj: Any, rules: RuleSet, levels: int = 0) -> bytes:
    """The 8-byte digest (xxh3-64, big-endian) of `obj` written by its state with `rules`
    and no budget, by a fresh Python encoder, as it would be written `levels` object
    states deep (0: outermost; the object depth counts from there, so the digest covers
    what the log would hold without the budget, and no more). Its numbers and
    placeholders count from 1 inside it, so the digest says what the object holds
    whatever else the log holds. Both encoders write this for an object the budget
    writes by identity."""
    return xxhash.xxh3_64_digest(_digest_encoder(rules).encode_whole(obj, levels))


def digest_with(encoder_class: Callable[[RuleSet], Any]) -> None:
    """Have `state_digest` write with `encoder_class` (`_impl` gives the C encoder when it
    is loaded: the same bytes, written faster)."""
    global _digest_encoder
    _digest_encoder = encoder_class


def uuid_key(value: _uuid.UUID) -> int:
    """What a uuid is numbered by: its 128-bit value (the key `normalize.UUID` gives the
    same uuid in a text), an exact int even when `UUID.int` holds an int subclass (an
    IntEnum member, as `UUID(int=...)` keeps it). A `UUID` whose `int` was made something
    else raises (the encoder writes it as `Unencodable`): `OverflowError` for an int
    outside 0 .. 2**128 - 1, `TypeError` for a value that is not an int."""
    number = value.int
    if type(number) is not int and issubclass(type(number), int):
        number = operator.index(number)  # int's own copy: no code of the subclass runs
    if type(number) is int:
        if 0 <= number < _UUID_END:
            return number
        raise OverflowError("UUID.int is not a 128-bit unsigned int")
    raise TypeError("UUID.int is not an int")


_UUID_END = 1 << 128


class TooLarge(Exception):
    """A value over an encoding limit: the encoder writes an `Unencodable` marker in its place.

    The C encoder raises this class too (it is in `SPEEDUPS_INTERFACE`), so a marker
    says the same whichever encoder wrote it.
    """


# The encoder `state_digest` writes with (digest_with).
_digest_encoder: Callable[[RuleSet], Any] = Encoder

_NESTING = frozenset({list, dict, tuple, set, frozenset, Record, ObjectState, Custom, ExceptionValue, Pairs, SetItems})

_HANDLERS: dict[type, Callable[[Encoder, Any, bytearray, int], None]] = {
    type(None): Encoder._none,
    bool: Encoder._bool,
    int: Encoder._int,
    float: Encoder._float,
    str: Encoder._str,
    bytes: Encoder._bytes,
    list: Encoder._list,
    dict: Encoder._dict,
    tuple: Encoder._tuple,
    set: Encoder._set,
    frozenset: Encoder._set,
    _uuid.UUID: Encoder._uuid,
    _dt.datetime: Encoder._datetime,
    _dt.date: Encoder._date,
    _dt.time: Encoder._time,
    _dt.timedelta: Encoder._timedelta,
    Decimal: Encoder._decimal,
    pathlib.PurePosixPath: Encoder._path,
    Record: Encoder._record,
    ObjectState: Encoder._object_state,
    Custom: Encoder._custom,
    EnumValue: Encoder._enum,
    ExceptionValue: Encoder._exception,
    Placeholder: Encoder._inert_placeholder,
    Cycle: Encoder._cycle_value,
    Opaque: Encoder._opaque,
    Unencodable: Encoder._unencodable_value,
    Instance: Encoder._instance,
    Pairs: Encoder._pairs,
    SetItems: Encoder._set_items,
}


def encode(value: Any, rules: RuleSet = DEFAULT_RULES) -> bytes:
    """The canonical bytes of one value with a fresh numbering."""
    return Encoder(rules).encode(value)


def limits() -> tuple[int, int, int]:
    """The encoder's limits as they stand: `(MAX_DEPTH, MAX_STR, MAX_ITEMS)`."""
    return MAX_DEPTH, MAX_STR, MAX_ITEMS


# Everything the C encoder and spy take from Python, given once to
# `_speedups.configure(**SPEEDUPS_INTERFACE)` by `_impl`: the C code reads no other
# name of callpin's modules (docs/speedups.md describes each entry). The types are
# those the encoder recognizes by identity; the functions are called back for what
# the C code leaves to Python; `limits` is called when an encoder is created.
SPEEDUPS_INTERFACE: Mapping[str, object] = MappingProxyType(
    {
        "UUID": _uuid.UUID,
        "Decimal": Decimal,
        "PurePosixPath": pathlib.PurePosixPath,
        "datetime": _dt.datetime,
        "date": _dt.date,
        "time": _dt.time,
        "timedelta": _dt.timedelta,
        "Record": Record,
        "ObjectState": ObjectState,
        "Identities": Identities,
        "Custom": Custom,
        "EnumValue": EnumValue,
        "ExceptionValue": ExceptionValue,
        "Placeholder": Placeholder,
        "Cycle": Cycle,
        "Opaque": Opaque,
        "Unencodable": Unencodable,
        "Instance": Instance,
        "Pairs": Pairs,
        "SetItems": SetItems,
        "TooLarge": TooLarge,
        "canonical_form": canonical_form,
        "qualified_name": qualified_name,
        "normalize_text": normalize_text,
        "state_digest": state_digest,
        "limits": limits,
        "object_limits": (MAX_OBJECT_DEPTH, OBJECT_BUDGET),
        "DEFAULT_RULES": DEFAULT_RULES,
        "Numbering": Numbering,
        "BUILTIN_RULES": tuple(BUILTIN_RULES.values()),
    }
)


# ---------------------------------------------------------------------------
# The decoder.


class Decoder:
    """Decode canonical bytes into inert values, enforcing the reader's limits."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._depth = 0
        # Built once: a log's reader decodes one frame at a time, and building these
        # options per frame was about a quarter of decoding a small event.
        self._options: dict[str, Any] = {
            "ext_hook": self._ext,
            "raw": False,
            "strict_map_key": False,
            **UNPACK_LIMITS,
        }

    def decode(self, data: bytes) -> Any:
        """Decode exactly one value; CorruptLog (or LimitExceeded) when it is not one."""
        try:
            return self._unpack(data)
        except (CorruptLog, RecursionError):
            raise
        except msgpack.StackError:
            raise LimitExceeded(
                self.path,
                f"value nested deeper than the decoder's stack ({MSGPACK_STACK_DEPTH})",
                limit=MSGPACK_STACK_DEPTH,
            ) from None
        except ValueError as exc:
            raise _limit_or_corrupt(self.path, exc) from None
        except Exception as exc:
            raise CorruptLog(self.path, f"undecodable value ({type(exc).__name__}: {exc})") from None

    def _unpack(self, data: bytes | bytearray) -> Any:
        options = self._options
        if _MAP16 in data or _MAP32 in data:
            # Maybe a map of 16 keys or more: built here, so keys sharing a hash are caught.
            return msgpack.unpackb(data, object_pairs_hook=_pairs_or_dict, **options)
        try:
            return msgpack.unpackb(data, **options)
        except TypeError as exc:
            if "unhashable" not in str(exc):
                raise
            return msgpack.unpackb(data, object_pairs_hook=_pairs_or_dict, **options)

    def _ext(self, code: int, data: bytes) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_EXT_DEPTH:
                raise LimitExceeded(
                    self.path, f"value nested deeper than {MAX_EXT_DEPTH} ext levels", limit=MAX_EXT_DEPTH
                )
            return self._ext_value(code, data)
        finally:
            self._depth -= 1

    def _ext_value(self, code: int, data: bytes) -> Any:
        if code == EXT_TUPLE:
            return tuple(self._array(data))
        if code in (EXT_SET, EXT_FROZENSET):
            items = self._array(data)
            frozen = code == EXT_FROZENSET
            try:
                if _crowded(items):
                    return SetItems(frozen, tuple(items))
                built: set[Any] | frozenset[Any] = frozenset(items) if frozen else set(items)
            except TypeError:
                return SetItems(frozen, tuple(items))
            if len(built) != len(items):
                return SetItems(frozen, tuple(items))
            return built
        if code == EXT_BIGINT:
            return int.from_bytes(data, "big", signed=True)
        if code == EXT_DECIMAL:
            try:
                return Decimal(data.decode("ascii"))
            except (InvalidOperation, UnicodeDecodeError):
                raise CorruptLog(self.path, "malformed decimal") from None
        if code == EXT_UUID:
            if len(data) != 16:
                raise CorruptLog(self.path, "malformed uuid")
            return _uuid.UUID(bytes=data)
        if code == EXT_DATETIME:
            return _dt.datetime.fromisoformat(data.decode("ascii"))
        if code == EXT_DATE:
            return _dt.date.fromisoformat(data.decode("ascii"))
        if code == EXT_TIME:
            return _dt.time.fromisoformat(data.decode("ascii"))
        if code == EXT_TIMEDELTA:
            days, seconds, micro = self._parts(data, 3, int, int, int)
            return _dt.timedelta(days, seconds, micro)
        if code == EXT_PATH:
            return pathlib.PurePosixPath(data.decode("utf-8", "surrogatepass"))
        if code == EXT_ENUM:
            type_name, name = self._parts(data, 2, str, str)
            return EnumValue(type_name, name)
        if code == EXT_RECORD:
            type_name, fields = self._parts(data, 2, str, (dict, Pairs))
            pairs = fields.items if isinstance(fields, Pairs) else tuple(fields.items())
            if not all(isinstance(name, str) for name, _ in pairs):
                raise CorruptLog(self.path, "malformed record")
            return Record(type_name, tuple(pairs))
        if code == EXT_OBJECT:
            type_name, number, fields = self._parts(data, 3, str, int, (dict, Pairs))
            pairs = fields.items if isinstance(fields, Pairs) else tuple(fields.items())
            if not all(isinstance(name, str) for name, _ in pairs):
                raise CorruptLog(self.path, "malformed object state")
            return ObjectState(type_name, number, tuple(pairs))
        if code == EXT_CUSTOM:
            type_name, value = self._parts(data, 2, str, object)
            return Custom(type_name, value)
        if code == EXT_EXCEPTION:
            type_name, args = self._parts(data, 2, str, list)
            return ExceptionValue(type_name, tuple(args))
        if code == EXT_PLACEHOLDER:
            name, number = self._parts(data, 2, str, int)
            return Placeholder(name, number)
        if code == EXT_CYCLE:
            up = self._unpack(data)
            if not _native_int(up):
                raise CorruptLog(self.path, "malformed cycle marker")
            return Cycle(up)
        if code == EXT_OPAQUE:
            type_name, text = self._parts(data, 2, str, str)
            return Opaque(type_name, text)
        if code == EXT_SURROGATE_STR:
            return data.decode("utf-8", "surrogatepass")
        if code == EXT_UNENCODABLE:
            type_name, reason = self._parts(data, 2, str, str)
            return Unencodable(type_name, reason)
        if code == EXT_INSTANCE:
            type_name, number = self._parts(data, 2, str, int)
            return Instance(type_name, number)
        if code == EXT_OVER_BUDGET:
            parts = self._array(data)
            if len(parts) == 2:  # format 1.2: no digest
                type_name, number = self._parts(data, 2, str, int)
                return Instance(type_name, number, True)
            return self._digested(data, True)
        if code == EXT_PAST_DEPTH:
            return self._digested(data, False)
        raise CorruptLog(self.path, f"unknown ext type {code}")

    def _digested(self, data: bytes, over_budget: bool) -> Instance:
        """ext 23 (since 1.3) or 24: [type, number, 8-byte digest]."""
        type_name, number, digest = self._parts(data, 3, str, int, bytes)
        if len(digest) != 8:
            raise CorruptLog(self.path, "malformed ext payload")
        return Instance(type_name, number, over_budget, digest)

    def _array(self, data: bytes) -> list[Any]:
        items = self._unpack(data)
        if not isinstance(items, list):
            raise CorruptLog(self.path, "malformed ext payload")
        return items

    def _parts(self, data: bytes, count: int, *types: Any) -> list[Any]:
        parts = self._array(data)
        if len(parts) != count or not all(
            _native_int(part) if kind is int else isinstance(part, kind)
            for part, kind in zip(parts, types, strict=True)
        ):
            raise CorruptLog(self.path, "malformed ext payload")
        return parts


def _native_int(value: Any) -> bool:
    """An int msgpack writes natively: counts and numbers inside ext payloads are one,
    never a big int (whose text could be too long for Python to print)."""
    return type(value) is int and -(2**63) <= value < 2**64


def _pairs_or_dict(pairs: list[tuple[Any, Any]]) -> dict[Any, Any] | Pairs:
    try:
        if _crowded([key for key, _ in pairs]):
            return Pairs(tuple(pairs))
        built = dict(pairs)
    except TypeError:
        return Pairs(tuple(pairs))
    return built


def _crowded(items: list[Any]) -> bool:
    """More than MAX_SHARED_HASH of `items` share one hash (TypeError: one is unhashable).

    Building a dict or set of n items with one hash takes n² comparisons: a log of a
    few hundred kilobytes of ints equal modulo 2**61 - 1 would take hours to decode.
    Such keys or elements stay a Pairs or SetItems, in their order.
    """
    if len(items) <= MAX_SHARED_HASH:
        return False
    return max(Counter(map(hash, items)).values()) > MAX_SHARED_HASH


def limit_hit(exc: ValueError) -> int | None:
    """The limit of UNPACK_LIMITS that msgpack's error `exc` says was exceeded, or None."""
    found = _LIMIT_NAME.search(str(exc))
    return None if found is None else UNPACK_LIMITS.get(found.group(1))


def _limit_or_corrupt(path: str | None, exc: ValueError) -> CorruptLog:
    text = str(exc)
    limit = limit_hit(exc)
    if limit is not None:
        return LimitExceeded(path, f"decoding limit exceeded ({text})", limit=limit)
    return CorruptLog(path, f"undecodable value ({text or type(exc).__name__})")


def decode(data: bytes) -> Any:
    """Decode one canonically encoded value into its inert form."""
    return Decoder().decode(data)
