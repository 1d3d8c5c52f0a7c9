"""Range-based set reconciliation of log heights, sans-I/O.

Each side holds a sorted set of items (public_key, log_id, seq_num), one per
log: its height. Ranges are half-open [lower, upper) in item order; an upper
bound equal to the smallest possible item, ("", 0, 0), means "to the end".
A range's fingerprint - the lifting monoid - is the sum mod 2^64 of the
xxHash64 of its items, with their count (``lift_type``: 8 + 4 bytes); prefix
sums make any range's fingerprint O(log n).

Messages travel in order and each range message covers [lower, upper),
where lower is the previous message's upper bound (or a ``LowerBound``).
Requests ask for an answer covering the same range:

    Fingerprint   "my items here hash to this"  -> Done (equal), my items
                  as Payloads (can_respond) if I have few, EmptyPayload if I
                  have none, else Fingerprints of two halves (split)
    Payload*      "my items here" (can_respond: send me yours) -> all my
                  items there as Payloads (so both sides know both), or Done
    EmptyPayload  "I have none here, send yours" -> Payloads, or Done
    EmptySet      "I have nothing at all" -> all my items, or Done

Each side counts its unanswered ranges and sends ``Terminal`` when none
remain; when both have, the items learned tell each side which logs the
other is behind on (``plan``). For N items differing in d, this costs
O(d log N) messages in O(log N) round trips.
"""

from __future__ import annotations

import bisect
import struct

import xxhash

from .messages import (
    Done,
    EmptyPayload,
    EmptySet,
    Fingerprint,
    Item,
    LowerBound,
    Payload,
    ReplicationError,
    Terminal,
)

MIN: Item = ("", 0, 0)
INF = None  # an upper bound past every item
ITEMIZE_AT_MOST = 4


def _hash(item: Item) -> int:
    return xxhash.xxh64_intdigest(f"{item[0]}\x00{item[1]}\x00{item[2]}".encode())


def lift(total: int, count: int) -> bytes:
    return struct.pack(">QI", total % (1 << 64), count)


class Reconciler:
    """One side of one session's set reconciliation."""

    def __init__(self, session_id: int, items: list[Item]) -> None:
        self.sid = session_id
        self.items = sorted(set(items))
        self._sums = [0]
        for item in self.items:
            self._sums.append((self._sums[-1] + _hash(item)) % (1 << 64))
        self.remote: dict[tuple[str, int], int] = {}  # (public_key, log_id) -> their seq, as learned
        self.sent: set[Item] = set()  # my items the other side has seen
        self._out: list = []
        self._outstanding: list[tuple[Item, Item | None]] = []  # my requests awaiting answers, in order
        self._send_lower: Item = MIN
        self._recv_lower: Item = MIN
        self._incoming: list[Item] = []  # Payload items of the range being received
        self._sent_terminal = False
        self._got_terminal = False
        self.messages_sent = 0

    # ------------------------------------------------------------- ranges

    def _span(self, lower: Item, upper: Item | None) -> tuple[int, int]:
        lo = bisect.bisect_left(self.items, lower)
        hi = len(self.items) if upper is INF else bisect.bisect_left(self.items, upper)
        return lo, max(lo, hi)

    def _fingerprint(self, lower: Item, upper: Item | None) -> bytes:
        lo, hi = self._span(lower, upper)
        return lift(self._sums[hi] - self._sums[lo], hi - lo)

    def _emit(self, msg, lower: Item | None = None, upper: Item | None = INF, covers: bool = True) -> None:
        if lower is not None and lower != self._send_lower:
            self._out.append(LowerBound(self.sid, lower))
        self._out.append(msg)
        if covers:
            self._send_lower = MIN if upper is INF else upper

    @staticmethod
    def _wire(upper: Item | None) -> Item:
        return MIN if upper is INF else upper

    # -------------------------------------------------------------- start

    def start(self) -> None:
        """The initiator opens with the whole range."""
        if not self.items:
            self._emit(EmptySet(self.sid, True), MIN, INF)
        else:
            self._emit(Fingerprint(self.sid, self._fingerprint(MIN, INF), MIN), MIN, INF)
        self._outstanding.append((MIN, INF))

    # ------------------------------------------------------------ receive

    def receive(self, msg) -> None:
        if isinstance(msg, LowerBound):
            self._recv_lower = msg.value
            return
        if isinstance(msg, Terminal):
            self._got_terminal = True
            return
        lower = self._recv_lower
        if isinstance(msg, EmptySet):
            upper = INF
            lower = MIN
        elif isinstance(msg, Payload):
            self._learn(msg.value)
            self._incoming.append(msg.value)
            if msg.upper_bound is None:
                return  # more items of this range follow
            upper = None if msg.upper_bound == MIN else msg.upper_bound
        else:
            upper = None if msg.upper_bound == MIN else msg.upper_bound
        self._recv_lower = self._wire(upper)
        self._answered(upper)
        if isinstance(msg, Fingerprint):
            self._on_fingerprint(lower, upper, msg.lift_type)
        elif isinstance(msg, Payload):
            self._incoming = []
            if msg.can_respond:
                # all of mine, not just what they lack: otherwise they could not
                # tell "you have it too" from "you lack it"
                self._send_items(lower, upper)
        elif isinstance(msg, EmptyPayload):
            self._send_items(lower, upper)
        elif isinstance(msg, EmptySet):
            if msg.can_respond:
                self._send_items(MIN, INF)
        elif not isinstance(msg, Done):
            raise ReplicationError(f"{type(msg).__name__} in set reconciliation")
        self._maybe_terminal()

    def _learn(self, item: Item) -> None:
        key = (item[0], item[1])
        self.remote[key] = max(self.remote.get(key, 0), item[2])

    def _answered(self, upper: Item | None) -> None:
        """The other side's answer covers my requests up to ``upper``."""
        while self._outstanding:
            _, hi = self._outstanding[0]
            if upper is INF or (hi is not INF and hi <= upper):
                self._outstanding.pop(0)
            else:
                break

    def _on_fingerprint(self, lower: Item, upper: Item | None, theirs: bytes) -> None:
        lo, hi = self._span(lower, upper)
        mine = self.items[lo:hi]
        if self._fingerprint(lower, upper) == theirs:
            self._emit(Done(self.sid, self._wire(upper)), lower, upper)
        elif not mine:
            self._emit(EmptyPayload(self.sid, self._wire(upper)), lower, upper)
            self._outstanding.append((lower, upper))
        elif len(mine) <= ITEMIZE_AT_MOST:
            self._payloads(mine, lower, upper, can_respond=True)
            self._outstanding.append((lower, upper))
        else:
            middle = mine[len(mine) // 2]
            for a, b in ((lower, middle), (middle, upper)):
                self._emit(Fingerprint(self.sid, self._fingerprint(a, b), self._wire(b)), a, b)
                self._outstanding.append((a, b))

    def _send_items(self, lower: Item, upper: Item | None) -> None:
        lo, hi = self._span(lower, upper)
        mine = self.items[lo:hi]
        if mine:
            self._payloads(mine, lower, upper, can_respond=False)
        else:
            self._emit(Done(self.sid, self._wire(upper)), lower, upper)

    def _payloads(self, items: list[Item], lower: Item, upper: Item | None, can_respond: bool) -> None:
        for i, item in enumerate(items):
            last = i == len(items) - 1
            msg = Payload(self.sid, item, can_respond, self._wire(upper)) if last else Payload(self.sid, item)
            self._emit(msg, lower if i == 0 else None, upper, covers=last)
            self.sent.add(item)

    def _maybe_terminal(self) -> None:
        if not self._outstanding and not self._sent_terminal and not self._incoming:
            self._sent_terminal = True
            self._out.append(Terminal(self.sid))

    # ------------------------------------------------------------- output

    def messages(self) -> list:
        out, self._out = self._out, []
        self.messages_sent += len(out)
        return out

    @property
    def finished(self) -> bool:
        return self._sent_terminal and self._got_terminal

    def plan(self) -> list[tuple[str, int, int]]:
        """(public_key, log_id, their seq) for every log of mine found in a
        range that differed: send what we hold above ``their seq``. That
        includes every log they are behind on, and also logs where they are
        ahead of our height - we may still hold entries beyond a hole."""
        return [(pk, log, self.remote.get((pk, log), 0)) for pk, log, _ in sorted(self.sent)]
