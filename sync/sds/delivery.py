"""Into the log: a message, everything its arrival frees, and what is given up.

A message is delivered the moment its last dependency is in the log, and
that may free others waiting in the incoming buffer, transitively; a
dependency not found within ``lost_after_ms`` is given up as ``Lost``,
which frees what waits for it with the gap recorded (unless its sender has
too many such messages waiting: see ``incoming``). Each delivery is
reported as ``Delivered`` with its position and exact wire bytes, for the
caller to store and serve.
"""

from __future__ import annotations

from collections.abc import Callable

from .events import Delivered, Lost
from .incoming import IncomingBuffer, Pending
from .log import LocalLog
from .output import Output
from .repair import Responses
from .wire import SdsMessage

HintFunction = Callable[[str, str, bytes, object], "bytes | None"]
"""(message_id, sender_id, content, decoded) -> the retrieval hint to cite it
with; ``decoded`` is what the caller made of the content when it handed the
message over (``Checked.decoded``, ``Channel.send``), None after a restore."""


class Delivery:
    def __init__(self, log: LocalLog, incoming: IncomingBuffer, repair: Responses, out: Output,
                 hint_for: HintFunction | None) -> None:
        self._log, self._incoming, self._repair, self._out = log, incoming, repair, out
        self._hint_for = hint_for

    def deliver(self, ready: list[Pending]) -> None:
        """Deliver ``ready`` and, transitively, every buffered message whose
        last unmet dependency that makes available."""
        while ready:
            pending = ready.pop()
            self.insert(pending.msg, pending.wire, pending.received_at, gaps=tuple(pending.gaps),
                        decoded=pending.decoded)
            ready.extend(self._incoming.satisfy(pending.msg.message_id))

    def insert(self, msg: SdsMessage, wire: bytes, received_at: int, own: bool = False, gaps: tuple = (),
               decoded: object = None) -> None:
        mid, lamport, sender = msg.message_id, msg.lamport_timestamp, msg.sender_id
        hint = self._hint_for(mid, sender, msg.content, decoded) if self._hint_for else None
        if hint is None and mid in self._incoming.missing:
            hint = self._incoming.missing[mid].entry.retrieval_hint
        position = self._log.insert(mid, lamport, sender, hint)
        self._repair.remember(mid, sender, wire, own)
        self._out.stats["delivered"] += 1
        self._out.emit(Delivered(
            message_id=mid, sender_id=sender, lamport=lamport, content=msg.content, position=position, wire=wire,
            received_at=received_at, own=own, gaps=gaps, decoded=decoded))

    def give_up(self, dep: str) -> None:
        """``dep`` was not found in time: release what waits for it and,
        unless all of that was refused, record it as lost. (A dependency that
        is itself buffered is only given up as a dependency; it is still
        delivered once its own wait ends.)"""
        if dep in self._log:
            return
        missing = self._incoming.missing.get(dep)
        freed, lost = self._incoming.give_up(dep)
        if missing is not None and lost:
            self._log.add_lost(dep)
            self._out.stats["lost"] += 1
            self._out.emit(Lost(missing.entry, tuple(p.msg.message_id for p in reversed(freed))))
        self.deliver(freed)
