"""One round of set reconciliation as messages: reading a received round
into its ranges, and writing the next one.

Within a round a message's lower bound is the previous message's upper
bound, or a ``LowerBound``; a round starts at the smallest item and ends
with a ``Terminal`` (an ``EmptySet`` is a round of its own). The reader
checks that ranges come in order and that each ``ItemPayload`` lies in its
range; the writer leaves out the lower bounds the order implies and merges
neighbouring ``Done`` answers (see ``reconcile`` for what the ranges mean).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import (Done, EmptyPayload, EmptySet, Fingerprint, Item, ItemPayload, LowerBound, ReplicationError,
                       Terminal)
from .ranges import INF, MIN, unlift


@dataclass
class Range:
    """One range of a received round."""

    kind: type
    lower: Item
    upper: Item | None
    lift: tuple | None = None  # their fingerprint, read: (sum, count, (log hash, height) or None)
    values: list[Item] = field(default_factory=list)
    can_respond: bool = False


class RoundReader:
    """Collects the ranges of the round being received, checking that they
    come in order and that each ItemPayload lies in its range."""

    def __init__(self) -> None:
        self._ranges: list[Range] = []
        self._run: list[Item] = []  # ItemPayload values of a run not yet closed
        self._lower: Item | None = MIN  # None: past the end

    def read(self, msg) -> bool:
        """Takes one message; True when it ends the round."""
        if isinstance(msg, Terminal):
            if self._run:
                raise ReplicationError("a run of Payloads ends without an upper bound")
            return True
        if isinstance(msg, LowerBound):
            if self._lower is None or msg.value < self._lower:
                raise ReplicationError("LowerBound goes backwards")
            self._lower = msg.value
        elif isinstance(msg, EmptySet):
            if self._ranges or self._run or self._lower != MIN:
                raise ReplicationError("EmptySet inside a round")
            self._ranges.append(Range(EmptySet, MIN, INF, can_respond=msg.can_respond))
            return True  # as in range-reconcile, an EmptySet is a round of its own
        elif isinstance(msg, ItemPayload):
            self._payload(msg)
        elif isinstance(msg, (Done, EmptyPayload, Fingerprint)):
            lower, upper = self._advance(msg.upper_bound)
            their = unlift(msg.lift_type) if isinstance(msg, Fingerprint) else None
            self._ranges.append(Range(type(msg), lower, upper, their))
        else:
            raise ReplicationError(f"{type(msg).__name__} in set reconciliation")
        return False

    def take(self) -> list[Range]:
        ranges, self._ranges, self._lower = self._ranges, [], MIN
        return ranges

    def _advance(self, wire_upper: Item) -> tuple[Item, Item | None]:
        lower, upper = self._lower, (INF if wire_upper == MIN else wire_upper)
        if lower is None or (upper is not INF and upper <= lower):
            raise ReplicationError("range bounds out of order")
        self._lower = upper
        return lower, upper

    def _payload(self, msg: ItemPayload) -> None:
        value = msg.value
        last = self._run[-1] if self._run else self._lower
        if last is None or value < last or (self._run and value[:2] == last[:2]):
            raise ReplicationError("Payload values out of order")
        self._run.append(value)
        if msg.upper_bound is None:
            return
        lower, upper = self._advance(msg.upper_bound)
        if upper is not INF and value >= upper:
            raise ReplicationError("Payload value beyond its upper bound")
        self._ranges.append(Range(ItemPayload, lower, upper, values=self._run, can_respond=bool(msg.can_respond)))
        self._run = []


def wire(upper: Item | None) -> Item:
    return MIN if upper is INF else upper


class RoundWriter:
    """The messages of the round being written: each range's lower bound is
    implied where it can be, and Done answers merge."""

    def __init__(self, session_id: int) -> None:
        self.sid = session_id
        self.out: list = []
        self._lower: Item = MIN  # the lower bound the next message implies
        self._done_upper: Item | None | bool = False  # a Done being stretched; False: none

    @property
    def pending(self) -> bool:
        return bool(self.out) or self._done_upper is not False

    def emit(self, msgs: list, lower: Item, upper: Item | None) -> None:
        if self._done_upper is not False:
            # a pending Done is stretched to this range: it costs no LowerBound
            self.out.append(Done(self.sid, lower))
            self._done_upper = False
        elif lower != self._lower:
            self.out.append(LowerBound(self.sid, lower))
        self.out.extend(msgs)
        self._lower = wire(upper)

    def done(self, upper: Item | None) -> None:
        """Done messages of neighbouring ranges, and of the settled ground
        between them, merge into one."""
        self._done_upper = upper

    def payloads(self, values: list[Item], lower: Item, upper: Item | None, can_respond: bool) -> None:
        if values:
            msgs = [ItemPayload(self.sid, v) for v in values[:-1]]
            self.emit([*msgs, ItemPayload(self.sid, values[-1], can_respond, wire(upper))], lower, upper)

    def end_round(self) -> None:
        if self._done_upper is not False:
            self.out.append(Done(self.sid, MIN))  # the last Done may as well reach the end
            self._done_upper = False
        if not isinstance(self.out[-1], EmptySet):
            self.out.append(Terminal(self.sid))  # an EmptySet is a round of its own
        self._lower = MIN

    def take(self) -> list:
        out, self.out = self.out, []
        return out
