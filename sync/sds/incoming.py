"""Messages waiting for their history: the incoming buffer, and what it lacks.

A content message whose causal dependencies are not all in the log waits
here, and is released the moment its last dependency is (``satisfy``). A
dependency we do not even hold in the buffer is *missing*: reported
(``Missing``, again every ``sweep_interval_ms``), queued for an SDS-R repair
request at its ``T_req``, and given up as lost after ``lost_after_ms``, which
releases whatever waits for it with the gap recorded.

Sync messages are not buffered, so the missing ids they name have nobody
waiting; past ``max_missing`` such ids are not chased at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.core import Schedule

from .config import Config
from .events import HistoryEntry, Missing
from .log import LocalLog
from .output import Output
from .repair import request_at
from .wire import SdsMessage, decode, entry_from_pb


@dataclass(slots=True)
class Pending:
    msg: SdsMessage
    wire: bytes
    received_at: int
    unmet: set[str]
    stamp: int  # arrival order, kept across restores
    gaps: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[int, str]:
        return (self.msg.lamport_timestamp, self.msg.message_id)


class IncomingBuffer:
    def __init__(self, config: Config, self_id: str, log: LocalLog, out: Output) -> None:
        self.config, self._self_id, self._log, self._out = config, self_id, log, out
        self.pending: dict[str, Pending] = {}
        self._waiters: dict[str, list[str]] = {}
        self.missing: dict[str, HistoryEntry] = {}
        self.give_up_at: Schedule[str] = Schedule()
        self.next_sweep: int | None = None
        self.requests: Schedule[str] = Schedule()  # SDS-R: when to ask for a missing message
        self.request_entries: dict[str, HistoryEntry] = {}
        self.stamp = 0
        self.dirty: set[str] = set()  # pending entries changed since the last take
        self.missing_changed = False

    def __contains__(self, message_id: str) -> bool:
        return message_id in self.pending

    def __len__(self) -> int:
        return len(self.pending)

    # ------------------------------------------------------------ arriving

    def unmet(self, msg: SdsMessage, now: int) -> set[str]:
        """Dependencies of ``msg`` not in the log. Those we do not even hold
        in the buffer are missing: reported, and queued for SDS-R."""
        unmet: set[str] = set()
        new: list[HistoryEntry] = []
        for pb in msg.causal_history:
            dep = pb.message_id
            if self._log.settled(dep):
                continue
            known = dep in self.pending or dep in self.missing
            if not known and not msg.content and len(self.missing) >= self.config.max_missing:
                self._out.stats["missing_full"] += 1
                continue
            unmet.add(dep)
            if dep not in self.give_up_at:
                self.give_up_at.set(dep, now + self.config.lost_after_ms)
                self.missing_changed = True
            if known:
                continue
            entry = entry_from_pb(pb)
            self.missing[dep] = entry
            new.append(entry)
            if dep not in self.requests:
                self.request_entries[dep] = entry
                self.requests.set(dep, request_at(now, self._self_id, dep, self.config))
        if new:
            self.missing_changed = True
            self._out.emit(Missing(tuple(new), len(self.pending) + (1 if msg.content else 0)))
            if self.next_sweep is None:
                self.next_sweep = now + self.config.sweep_interval_ms
        return unmet

    def hold(self, msg: SdsMessage, wire: bytes, now: int, unmet: set[str]) -> None:
        mid = msg.message_id
        self.stamp += 1
        self.pending[mid] = Pending(msg, wire, now, unmet, self.stamp)
        for dep in unmet:
            self._waiters.setdefault(dep, []).append(mid)
        self.dirty.add(mid)

    def supersede(self, msg: SdsMessage, wire: bytes) -> Pending | None:
        """Another copy of a buffered message. The id covers the content but
        not the causal history, so a copy whose history was corrupted (naming
        messages that never existed) could hold the real one back until
        ``lost_after_ms``. A copy waiting for strictly less replaces it; the
        dependencies only the replaced copy named are forgotten. Returns the
        message if it is now free to deliver."""
        mid = msg.message_id
        pending = self.pending[mid]
        unmet = {pb.message_id for pb in msg.causal_history if not self._log.settled(pb.message_id)}
        if not unmet < pending.unmet:
            self._out.stats["duplicate"] += 1
            return None
        self._out.stats["superseded"] += 1
        for dep in pending.unmet - unmet:
            waiters = self._waiters.get(dep, [])
            if mid in waiters:
                waiters.remove(mid)
            if not waiters:
                self._waiters.pop(dep, None)
                self.forget(dep)
        pending.msg, pending.wire, pending.unmet = msg, wire, unmet
        self.dirty.add(mid)
        if unmet:
            return None
        del self.pending[mid]
        return pending

    # ------------------------------------------------------------ resolving

    def forget(self, dep: str) -> None:
        """``dep`` needs no more waiting or asking for."""
        if self.missing.pop(dep, None) is not None or dep in self.give_up_at or dep in self.requests:
            self.missing_changed = True
        self.give_up_at.discard(dep)
        self.requests.discard(dep)
        self.request_entries.pop(dep, None)

    def satisfy(self, dep: str, *, lost: bool = False) -> list[Pending]:
        """``dep`` is no longer unmet; return the buffered messages it frees,
        latest last-popped first so they are delivered in log order."""
        self.forget(dep)
        freed: list[Pending] = []
        for waiter in self._waiters.pop(dep, ()):
            pending = self.pending.get(waiter)
            if pending is None:
                continue
            pending.unmet.discard(dep)
            if lost:
                pending.gaps.append(dep)
            self.dirty.add(waiter)
            if not pending.unmet:
                del self.pending[waiter]
                freed.append(pending)
        freed.sort(key=lambda p: p.key, reverse=True)
        return freed

    def sweep(self, now: int) -> None:
        if self.next_sweep is None or now < self.next_sweep:
            return
        self.missing_changed = True
        if self.missing:
            self._out.emit(Missing(tuple(self.missing.values()), len(self.pending)))
            self.next_sweep = now + self.config.sweep_interval_ms
        else:
            self.next_sweep = None

    def due_requests(self, now: int, limit: int) -> list[HistoryEntry]:
        """SDS-R: the due entries with the lowest T_req, each rescheduled in
        case nobody answers."""
        due = self.requests.pop_due(now, limit)
        for mid in due:
            self.requests.set(mid, request_at(now, self._self_id, mid, self.config))
        if due:
            self.missing_changed = True
        return [self.request_entries[mid] for mid in due]

    def drop_request(self, message_id: str) -> None:
        """Someone else asked for it, or it came: we need not ask."""
        if message_id in self.requests:
            self.requests.discard(message_id)
            self.missing_changed = True

    # ----------------------------------------------------------- persistence

    def export_entry(self, message_id: str) -> list | None:
        p = self.pending.get(message_id)
        return None if p is None else [p.wire, p.received_at, list(p.gaps), p.stamp]

    def export(self) -> dict[str, list]:
        return {mid: self.export_entry(mid) for mid in self.pending}

    def export_missing(self) -> dict:
        """The small part: what is missing, and when to ask and give up."""
        return {
            "missing": [[e.message_id, e.retrieval_hint, e.sender_id] for e in self.missing.values()],
            "give_up_at": [[dep, at] for dep, at in self.give_up_at.items()],
            "next_sweep": self.next_sweep,
            "requests": [[mid, e.retrieval_hint, e.sender_id, self.requests.get(mid)]
                         for mid, e in self.request_entries.items() if mid in self.requests],
        }

    def restore(self, entries: dict[str, list], small: dict) -> None:
        for mid, hint, sender in small["missing"]:
            self.missing[mid] = HistoryEntry(mid, hint, sender)
        for dep, at in small["give_up_at"]:
            self.give_up_at.set(dep, at)
        self.next_sweep = small["next_sweep"]
        for mid, hint, sender, at in small["requests"]:
            self.request_entries[mid] = HistoryEntry(mid, hint, sender)
            self.requests.set(mid, at)
        for _mid, (wire, received_at, gaps, stamp) in sorted(entries.items(), key=lambda kv: kv[1][3]):
            msg = decode(wire, self.config)
            unmet = {pb.message_id for pb in msg.causal_history if not self._log.settled(pb.message_id)}
            self.pending[msg.message_id] = Pending(msg, wire, received_at, unmet, stamp, list(gaps))
            for dep in unmet:
                self._waiters.setdefault(dep, []).append(msg.message_id)
