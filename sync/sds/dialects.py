"""Two bloom filter dialects on one channel: ours and @waku/sds's.

The published SDS protobuf leaves the ``bloom_filter`` bytes open, and two
formats meet on the wire:

* **compact** (ours, ``bloom.py``): a 22-byte header with the parameters,
  then the bits; 622 bytes at our defaults, rolled over at capacity;
* **waku** (``waku_bloom.py``): @waku/sds's fixed 18,752 bytes, no header.

We read both: a filter of exactly ``waku_bloom.WIRE_BYTES`` is the waku
dialect (``Config`` refuses compact parameters of that size, so the rule is
unambiguous), anything else is parsed by its header. @waku/sds reads only
its own and drops any message whose filter is shorter, so once a participant
is heard speaking it, we send our filter in its format - while anyone heard
speaking it is active - and the compact one otherwise. Our own peers read
either. One datagram goes to everyone, so the choice is per channel, made
from what is tracked per participant.

The waku filter holds the same ids as the compact one (its newest
``bloom_capacity``): it is the same set, in the other encoding, so it needs
no state of its own and acknowledges everything still in flight. Who speaks
which dialect needs none either: it is what the latest filter each
participant sent says, and those the channel keeps anyway. So nothing here
is saved, and a restored channel sends the same bytes as the original.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING

from proto.sds_pb2 import SdsMessage

from .bloom import RollingBloom, WireBloom
from .waku_bloom import WIRE_BYTES, WakuBloom

if TYPE_CHECKING:
    from .config import Config

__all__ = ["Dialect", "ReceivedFilter", "check_compact_size", "dialect_of", "read_filter"]


class Dialect(Enum):
    COMPACT = "compact"
    WAKU = "waku"


def dialect_of(data: bytes) -> Dialect:
    return Dialect.WAKU if len(data) == WIRE_BYTES else Dialect.COMPACT


def read_filter(data: bytes) -> WireBloom | WakuBloom:
    """Decode a filter in either dialect; ``RemoteProtocolError`` if neither."""
    if dialect_of(data) is Dialect.WAKU:
        return WakuBloom.decode(data)
    return WireBloom.decode(data)


class ReceivedFilter:
    """Our filter of received ids, sent in the dialect the channel needs.

    Wraps the compact ``RollingBloom`` and, from the first time a waku
    participant is heard, mirrors its ids into a ``WakuBloom``. Which one
    goes out is decided by the participants heard speaking the waku dialect
    within ``participant_timeout_ms``; at most ``max_participants`` of them
    are remembered (anyone can make up sender ids), least recently heard
    first, so every question about them costs O(1).
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.compact = RollingBloom(config.bloom_capacity, config.bloom_error_rate)
        self._waku: WakuBloom | None = None
        self._waku_heard: OrderedDict[str, int] = OrderedDict()  # participant -> last heard, oldest first

    def __contains__(self, key: str) -> bool:
        return key in self.compact

    def add(self, key: str) -> None:
        before = len(self.compact)
        self.compact.add(key)
        if self._waku is not None:
            if len(self.compact) == before + 1:
                self._waku.add(key)
            else:  # the compact filter rolled over: mirror the ids it kept
                self._waku = WakuBloom(self.compact.ids())

    def _mirror(self) -> WakuBloom:
        """The waku encoding of our ids, built the first time it is needed."""
        if self._waku is None:
            self._waku = WakuBloom(self.compact.ids())
        return self._waku

    # -------------------------------------------------------- per participant

    def heard(self, participant: str, data: bytes, now: int) -> Dialect:
        """Note the dialect of a filter ``participant`` sent at ``now``."""
        dialect = dialect_of(data)
        if dialect is Dialect.WAKU:
            self._waku_heard[participant] = now
            self._waku_heard.move_to_end(participant)
            if len(self._waku_heard) > self.config.max_participants:
                self._waku_heard.popitem(last=False)
        else:
            self._waku_heard.pop(participant, None)
        return dialect

    def speaks(self, participant: str, now: int) -> Dialect:
        """The dialect ``participant`` was last heard speaking, if lately."""
        at = self._waku_heard.get(participant)
        active = at is not None and at > now - self.config.participant_timeout_ms
        return Dialect.WAKU if active else Dialect.COMPACT

    def __len__(self) -> int:
        return len(self.compact)

    def outgoing(self, now: int) -> Dialect:
        """The dialect of the filters we send at ``now``."""
        if not self._waku_heard:
            return Dialect.COMPACT
        _, latest = next(reversed(self._waku_heard.items()))
        if latest > now - self.config.participant_timeout_ms:
            return Dialect.WAKU
        self._waku_heard.clear()  # every one of them has gone quiet
        return Dialect.COMPACT

    def to_bytes(self, now: int) -> bytes:
        if self.outgoing(now) is Dialect.WAKU:
            return self._mirror().to_bytes()
        return self.compact.to_bytes()

    def readable(self, wire: bytes, now: int, me: str) -> bytes:
        """``wire`` as it may be sent at ``now``. While a waku participant is
        active, a message whose filter it cannot read gets our current filter
        if it is ours (sender ``me``), and no filter if we relay it for
        someone else (a filter speaks for the message's sender). Unchanged
        when nothing needs fixing."""
        if self.outgoing(now) is not Dialect.WAKU:
            return wire
        msg = SdsMessage()
        msg.ParseFromString(wire)
        if not msg.HasField("bloom_filter") or dialect_of(msg.bloom_filter) is Dialect.WAKU:
            return wire
        if msg.sender_id == me:
            msg.bloom_filter = self.to_bytes(now)
        else:
            msg.ClearField("bloom_filter")
        return msg.SerializeToString()

    # ------------------------------------------------------------ persistence
    # Only the compact filter is state (see the module's docstring): a part,
    # ``bloom``, replaced whole when an id is added, and a collection of the
    # ids it is built from, ``bloom_ids``, written entry by entry.

    def export(self) -> dict:
        """``{"bloom": ..., "bloom_ids": ...}`` as plain data."""
        return {"bloom": self.compact.export(), "bloom_ids": self.compact.export_ids()}

    def changed(self) -> bool:
        """Has the ``bloom`` part changed since ``mark_saved``?"""
        return self.compact.changed()

    def export_part(self) -> dict:
        """The ``bloom`` part alone, what a step that added ids rewrites."""
        return self.compact.export()

    def changes(self) -> dict[str, dict[str, str | None]]:
        """The ``bloom_ids`` entries changed since ``mark_saved``, if any; None: gone."""
        return {"bloom_ids": self.compact.changed_ids()} if self.compact.changed() else {}

    def mark_saved(self) -> None:
        self.compact.mark_saved()

    def restore(self, saved: dict, filters: Iterable[tuple[str, bytes, int]]) -> None:
        """Back to what ``export`` gave (on a fresh filter), with the latest
        filter of each participant, ``(participant, filter bytes, when it
        arrived)``, which say who speaks which dialect."""
        self.compact.restore(saved["bloom"], saved["bloom_ids"])
        for participant, data, at in sorted(filters, key=lambda f: f[2]):
            self.heard(participant, data, at)


def check_compact_size(wire_bytes: int) -> None:
    """Refuse compact filter parameters that would pass for the waku dialect."""
    if wire_bytes == WIRE_BYTES:
        raise ValueError(f"a compact bloom filter of {WIRE_BYTES} bytes would read as the @waku/sds format")


