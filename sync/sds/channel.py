"""One participant's view of one SDS channel.

Theory of operation
-------------------

A ``Channel`` holds everything SDS asks a participant to keep per channel:

* a Lamport clock, in epoch milliseconds, set to ``max(now, clock + 1)`` for
  every message we send (content or sync) and raised to any timestamp we
  deliver;
* the local log: delivered message ids ordered by ``(lamport, message_id)``,
  kept in a sorted list so an insert costs O(log n) however long the history;
* the causal history we attach: the N messages most recently *delivered*
  to the log (own or received). Each has a lower Lamport timestamp than
  anything we send next, so they are true causal predecessors; choosing by
  delivery rather than by position means a message that reached us late
  (below newer ones in the log) is still referenced once, which is how
  peers that missed it learn that it exists;
* a rolling bloom filter of the content-message ids we have received;
* the outgoing buffer: our own messages not yet acknowledged. Each is
  *unacknowledged* until some peer's bloom filter holds it, then *possibly
  acknowledged* (counted per distinct peer) and finally *acknowledged* when
  it appears in a peer's causal history, or when bloom filters settle it:
  all of those holding it being false positives is less likely than
  ``Config.ack_certainty`` and every recently heard participant holds it.
  Unacknowledged and possibly acknowledged messages are rebroadcast on
  separate periods;
* the watch: an acknowledgement proves that one peer holds a message, not
  that all do. Acknowledged own messages are checked on the timer against
  each participant's latest bloom filter and rebroadcast only while one is
  seen lacking them (see ``_acknowledge``);
* the incoming buffer: messages whose causal dependencies are not all in the
  log yet. A message is delivered the moment its last dependency is, and a
  dependency not found within ``lost_after_ms`` is declared ``Lost`` and the
  messages waiting on it are delivered with the gap recorded;
* SDS-R state: missing entries waiting for their request time ``T_req``,
  requests from others waiting for our response time ``T_resp``, and the wire
  bytes of recent messages we might be asked to rebroadcast.

The engine is sans-I/O. ``receive`` takes bytes, ``send`` takes content, and
both take ``now``; the caller drains ``events()`` and ``datagrams_to_send()``
and calls ``handle_timer(now)`` at ``get_timer()``. Everything periodic -
resends, the watch, sweeps, lost deadlines, sync messages, repair - happens
there, each from a keyed ``Schedule`` so nothing is ever scanned.

Randomness (the sync backoff) is derived by hashing our id with a round
counter, so a channel is a deterministic function of its inputs and its
exported state, which is what lets a crashed peer resume exactly.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from sortedcontainers import SortedList

from sync.core import BROADCAST, Outgoing, Schedule

from .dialects import ReceivedFilter, read_filter
from .config import Config
from .errors import LocalProtocolError, RemoteProtocolError
from .events import (
    Acknowledged,
    Buffered,
    Delivered,
    EphemeralReceived,
    Event,
    HistoryEntry,
    Lost,
    Missing,
    PossiblyAcknowledged,
    Rejected,
    RepairRequested,
    RepairSent,
)
from .participants import Participants
from .repair import is_responder, request_at, response_at
from .validate import channel_id_problem, sender_id_problem
from .wire import SdsMessage, compute_message_id, decode, entry_from_pb, entry_to_pb, hash64

STATE_VERSION = 1
_MIN_LOG_FP = math.log(1e-300)

HintFunction = Callable[[str, str, bytes], "bytes | None"]
"""(message_id, sender_id, content) -> the retrieval hint to cite it with."""


@dataclass(slots=True)
class _LogEntry:
    lamport: int
    sender_id: str
    retrieval_hint: bytes | None


@dataclass(slots=True)
class _OwnMessage:
    wire: bytes
    sent_at: int
    possible_by: set[str] = field(default_factory=set)
    log_fp: float = 0.0  # sum of ln(false-positive rate) of the filters that held it
    resends: int = 0


@dataclass(slots=True)
class _Pending:
    msg: SdsMessage
    wire: bytes
    received_at: int
    unmet: set[str]
    gaps: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[int, str]:
        return (self.msg.lamport_timestamp, self.msg.message_id)


class LogView(Sequence[str]):
    """Read-only view of the delivered message ids, in log order."""

    __slots__ = ("_order",)

    def __init__(self, order: SortedList) -> None:
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return [key[1] for key in self._order[index]]
        return self._order[index][1]

    def __iter__(self) -> Iterator[str]:
        return (key[1] for key in self._order)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __repr__(self) -> str:
        return f"LogView({len(self)} messages)"


class Channel:
    """SDS for one channel, seen by participant ``sender_id``."""

    def __init__(
        self,
        channel_id: str,
        sender_id: str,
        now: int,
        config: Config | None = None,
        retrieval_hint: HintFunction | None = None,
    ) -> None:
        problem = sender_id_problem(sender_id) or channel_id_problem(channel_id)
        if problem:
            raise LocalProtocolError(problem)
        self.channel_id = channel_id
        self.sender_id = sender_id
        self.config = config = config or Config()
        self._hint_for = retrieval_hint

        self._lamport = now
        self._order: SortedList = SortedList()
        self._log: dict[str, _LogEntry] = {}
        self._lost: dict[str, None] = {}  # given up as lost, oldest first (an ordered set)
        self._recent: deque[str] = deque(maxlen=config.causal_history_size)
        self._bloom = ReceivedFilter(config)

        self._outgoing: dict[str, _OwnMessage] = {}
        self._resend: Schedule[str] = Schedule()
        self._watched: OrderedDict[str, _OwnMessage] = OrderedDict()
        self._watch: Schedule[str] = Schedule()

        self._incoming: dict[str, _Pending] = {}
        self._waiters: dict[str, list[str]] = {}
        self._missing: dict[str, HistoryEntry] = {}
        self._give_up_at: Schedule[str] = Schedule()
        self._next_sweep: int | None = None

        self._repair_out: Schedule[str] = Schedule()
        self._repair_entries: dict[str, HistoryEntry] = {}
        self._repair_in: Schedule[str] = Schedule()
        self._repair_cache: OrderedDict[str, bytes] = OrderedDict()

        self._sync_round = 0
        self._sync_due = 0
        self._sync_at = 0
        self._last_activity = now
        self._last_sent = now
        self._peers = Participants(config.max_participants, config.lost_after_ms)
        self._schedule_sync(now)

        self._outbox: list[bytes] = []
        self._events: list[Event] = []
        self.stats: Counter[str] = Counter()

    # ------------------------------------------------------------------ views

    @property
    def log(self) -> LogView:
        return LogView(self._order)

    @property
    def lamport(self) -> int:
        return self._lamport

    def unacknowledged(self) -> dict[str, int]:
        """Our messages still in the outgoing buffer -> distinct peers whose
        bloom filters hold them (0 means unacknowledged)."""
        return {mid: len(out.possible_by) for mid, out in self._outgoing.items()}

    @property
    def waiting(self) -> int:
        """Messages in the incoming buffer (unmet dependencies)."""
        return len(self._incoming)

    def missing(self) -> tuple[HistoryEntry, ...]:
        return tuple(self._missing.values())

    # ---------------------------------------------------------------- sending

    def send(self, content: bytes, now: int) -> str:
        """Broadcast ``content``; returns its message id."""
        content = _checked_content(content)
        lamport = max(now, self._lamport + 1)
        message_id = compute_message_id(self.sender_id, self.channel_id, lamport, content)
        msg = self._compose(message_id, lamport, content, now)
        wire = msg.SerializeToString()
        if len(wire) > self.config.max_datagram_bytes:
            raise LocalProtocolError(
                f"message of {len(wire)} bytes exceeds one datagram ({self.config.max_datagram_bytes})"
            )
        if self._attach_repair_requests(msg, now):
            wire = msg.SerializeToString()
        self._lamport = lamport
        self._last_activity = self._last_sent = now
        self._outbox.append(wire)
        self._outgoing[message_id] = _OwnMessage(wire, now)
        self._resend.set(message_id, now + self.config.resend_unacknowledged_ms)
        self._insert(msg, wire, now, own=True)
        self.stats["sent"] += 1
        return message_id

    def send_ephemeral(self, content: bytes, now: int) -> str:
        """Broadcast ``content`` once: no Lamport, history, bloom or buffering."""
        content = _checked_content(content)
        message_id = compute_message_id(self.sender_id, self.channel_id, None, content)
        msg = SdsMessage(sender_id=self.sender_id, message_id=message_id, channel_id=self.channel_id, content=content)
        wire = msg.SerializeToString()
        if len(wire) > self.config.max_datagram_bytes:
            raise LocalProtocolError(f"ephemeral message of {len(wire)} bytes does not fit one datagram")
        self._outbox.append(wire)
        self.stats["sent_ephemeral"] += 1
        return message_id

    def _compose(self, message_id: str, lamport: int, content: bytes, now: int) -> SdsMessage:
        msg = SdsMessage(
            sender_id=self.sender_id,
            message_id=message_id,
            channel_id=self.channel_id,
            lamport_timestamp=lamport,
            bloom_filter=self._bloom.to_bytes(now),  # in the dialect the channel speaks
        )
        if content:
            msg.content = content
        for mid in self._recent:
            entry = self._log[mid]
            msg.causal_history.append(entry_to_pb(HistoryEntry(mid, entry.retrieval_hint, entry.sender_id)))
        return msg

    def _attach_repair_requests(self, msg: SdsMessage, now: int) -> int:
        """SDS-R: the due entries with the lowest T_req ride along, at most
        ``repair_max_requests``; each is rescheduled in case nobody answers."""
        due = self._repair_out.pop_due(now, self.config.repair_max_requests)
        for mid in due:
            msg.repair_request.append(entry_to_pb(self._repair_entries[mid]))
            self._repair_out.set(mid, request_at(now, self.sender_id, mid, self.config))
        if due:
            self.stats["repair_requested"] += len(due)
            self._events.append(RepairRequested(tuple(due)))
        return len(due)

    def _send_sync(self, now: int) -> None:
        lamport = max(now, self._lamport + 1)
        message_id = compute_message_id(self.sender_id, self.channel_id, lamport, b"")
        msg = self._compose(message_id, lamport, b"", now)
        self._attach_repair_requests(msg, now)
        self._lamport = lamport
        self._last_sent = now
        self._outbox.append(msg.SerializeToString())
        self.stats["sync_sent"] += 1

    # -------------------------------------------------------------- receiving

    def receive(self, data: bytes, now: int, source: object = None) -> None:
        """Process one datagram from the network. Never raises for bad input.
        (``source`` is accepted as every engine does; SDS names its peers by
        the sender id inside the message.)"""
        self.stats["received"] += 1
        try:
            msg = decode(data, self.config)
            if msg.HasField("lamport_timestamp") and (
                msg.lamport_timestamp > max(now, self._lamport) + self.config.max_future_ms
            ):
                raise RemoteProtocolError("clock", f"Lamport timestamp {msg.lamport_timestamp} is too far ahead")
        except RemoteProtocolError as exc:
            self.stats[exc.kind] += 1
            self._events.append(Rejected(exc.kind, str(exc)))
            return
        if msg.channel_id != self.channel_id:
            self.stats["other_channel"] += 1
            return
        mid = msg.message_id
        # SDS-R: whoever holds this message, nobody needs to ask or answer for it.
        self._repair_out.discard(mid)
        self._repair_in.discard(mid)
        if msg.sender_id == self.sender_id:
            self.stats["echo"] += 1
            return
        self._peers.heard(msg.sender_id, now)
        if not msg.HasField("lamport_timestamp"):  # content without a timestamp (see ``validate``)
            self.stats["ephemeral"] += 1
            self._events.append(EphemeralReceived(msg.sender_id, msg.content, now))
            return
        content = msg.content
        if content and mid in self._incoming:
            self._supersede(self._incoming[mid], msg, data)
            return
        if content and mid in self._log:
            self.stats["duplicate"] += 1
            return
        self._last_activity = now
        self._review_acks(msg, now)
        self._take_repair_requests(msg, now)
        if not content:
            self.stats["sync_received"] += 1
            self._unmet(msg, now)
            return
        if len(self._incoming) >= self.config.max_incoming:
            self.stats["incoming_full"] += 1
            self._events.append(Rejected("incoming_full", "incoming_full: too many messages wait for history"))
            return
        self._bloom.add(mid)
        unmet = self._unmet(msg, now)
        if unmet:
            self._incoming[mid] = _Pending(msg, data, now, unmet)
            for dep in unmet:
                self._waiters.setdefault(dep, []).append(mid)
            self.stats["buffered"] += 1
            self._events.append(Buffered(mid, msg.sender_id, msg.lamport_timestamp, content, tuple(sorted(unmet))))
        else:
            self._deliver([_Pending(msg, data, now, set())])

    def _supersede(self, pending: _Pending, msg: SdsMessage, wire: bytes) -> None:
        """Another copy of a buffered message. The id covers the content but
        not the causal history, so a copy whose history was corrupted (naming
        messages that never existed) could hold the real one back until
        ``lost_after_ms``. A copy waiting for strictly less replaces it; the
        dependencies only the replaced copy named are forgotten."""
        unmet = {pb.message_id for pb in msg.causal_history
                 if pb.message_id not in self._log and pb.message_id not in self._lost}
        if not unmet < pending.unmet:
            self.stats["duplicate"] += 1
            return
        self.stats["superseded"] += 1
        mid = msg.message_id
        for dep in pending.unmet - unmet:
            waiters = self._waiters.get(dep, [])
            if mid in waiters:
                waiters.remove(mid)
            if not waiters:
                self._waiters.pop(dep, None)
                self._forget_missing(dep)
        pending.msg, pending.wire, pending.unmet = msg, wire, unmet
        if not unmet:
            del self._incoming[mid]
            self._deliver([pending])

    def _forget_missing(self, dep: str) -> None:
        self._missing.pop(dep, None)
        self._give_up_at.discard(dep)
        self._repair_out.discard(dep)
        self._repair_entries.pop(dep, None)

    def _unmet(self, msg: SdsMessage, now: int) -> set[str]:
        """Dependencies of ``msg`` not in the log. Those we do not even hold
        in the incoming buffer are missing: reported, and queued for SDS-R."""
        unmet: set[str] = set()
        new: list[HistoryEntry] = []
        for pb in msg.causal_history:
            dep = pb.message_id
            if dep in self._log or dep in self._lost:
                continue
            known = dep in self._incoming or dep in self._missing
            if not known and not msg.content and len(self._missing) >= self.config.max_missing:
                self.stats["missing_full"] += 1
                continue
            unmet.add(dep)
            if dep not in self._give_up_at:
                self._give_up_at.set(dep, now + self.config.lost_after_ms)
            if known:
                continue
            entry = entry_from_pb(pb)
            self._missing[dep] = entry
            new.append(entry)
            if dep not in self._repair_out:
                self._repair_entries[dep] = entry
                self._repair_out.set(dep, request_at(now, self.sender_id, dep, self.config))
        if new:
            self._events.append(Missing(tuple(new), len(self._incoming) + (1 if msg.content else 0)))
            if self._next_sweep is None:
                self._next_sweep = now + self.config.sweep_interval_ms
        return unmet

    def _review_acks(self, msg: SdsMessage, now: int) -> None:
        peer = msg.sender_id
        has_bloom = msg.HasField("bloom_filter")
        if has_bloom:
            self._peers.set_filter(peer, msg.bloom_filter, now)  # for the watch, checked on the timer
            self._bloom.heard(peer, msg.bloom_filter, now)
        for pb in msg.causal_history:
            mid = pb.message_id
            out = self._outgoing.get(mid) or self._watched.get(mid)
            if out is not None:
                out.possible_by.add(peer)
                if mid in self._outgoing:
                    self._acknowledge(mid, out, "causal_history", now)
        if not self._outgoing or not has_bloom:
            return
        try:
            bloom = read_filter(msg.bloom_filter)
        except RemoteProtocolError as exc:
            self.stats[exc.kind] += 1
            return
        log_fp: float | None = None
        for mid, out in list(self._outgoing.items()):
            if peer in out.possible_by or mid not in bloom:
                continue
            if log_fp is None:
                log_fp = max(math.log(bloom.false_positive_rate() or 1e-300), _MIN_LOG_FP)
            out.possible_by.add(peer)
            out.log_fp += log_fp
            if self._acknowledged_by_blooms(out, now):
                self._acknowledge(mid, out, "bloom", now)
                continue
            if len(out.possible_by) == 1:
                self._resend.set(mid, now + self.config.resend_possibly_acknowledged_ms)
            self._events.append(PossiblyAcknowledged(mid, len(out.possible_by)))

    def _acknowledged_by_blooms(self, out: _OwnMessage, now: int) -> bool:
        """Certain enough that these filters are not all false positives, and
        no active participant is left whose filter lacks the message."""
        return out.log_fp <= self.config.log_ack_certainty and self._covered(
            out, now - self.config.participant_timeout_ms
        )

    def _covered(self, out: _OwnMessage, horizon: int) -> bool:
        """Has every participant heard from since ``horizon`` shown ``out``?"""
        return all(peer in out.possible_by for peer, at in self._peers.items() if at > horizon)

    def _acknowledge(self, message_id: str, out: _OwnMessage, via: str, now: int) -> None:
        """Acknowledged: out of the outgoing buffer, and into the watch.

        A causal-history acknowledgement proves that one peer holds the
        message, not that all do; a peer that missed both the message and
        every reference to it could never learn it exists. So the message is
        *watched*: on the possibly-acknowledged period it is checked against
        the latest bloom filter of each participant, and rebroadcast only if
        one sent well after the message still lacks it. Watching remembers
        participants for ``lost_after_ms`` and lasts at least
        ``participant_timeout_ms``, so a peer back from a short absence - or
        one we had not heard from yet - still gets what it missed. The work
        happens on the timer, never per received datagram.
        """
        del self._outgoing[message_id]
        self._resend.discard(message_id)
        self.stats["acknowledged"] += 1
        self._events.append(Acknowledged(message_id, via, len(out.possible_by)))
        self._watched[message_id] = out
        self._watch.set(message_id, now + self.config.resend_possibly_acknowledged_ms)
        if len(self._watched) > self.config.max_watched:
            oldest, _ = self._watched.popitem(last=False)
            self._watch.discard(oldest)

    def _check_watched(self, message_id: str, now: int) -> None:
        out = self._watched[message_id]
        config = self.config
        horizon = now - config.lost_after_ms
        lacking = False
        for peer, heard_at in self._peers.items():
            latest = self._peers.filter_of(peer)
            if heard_at <= horizon or peer in out.possible_by or latest is None:
                continue
            data, received_at = latest
            if received_at < out.sent_at + config.resend_unacknowledged_ms:
                continue  # too early to tell: it may have been in flight
            try:
                holds = message_id in read_filter(data)
            except RemoteProtocolError:
                continue
            if holds:
                out.possible_by.add(peer)
            else:
                lacking = True
        age = now - out.sent_at
        if age >= config.lost_after_ms or (age >= config.participant_timeout_ms and self._covered(out, horizon)):
            del self._watched[message_id]
            return
        if lacking:
            self._rebroadcast(out, "rebroadcast_uncovered", now)
        self._watch.set(message_id, now + config.resend_possibly_acknowledged_ms)

    def _take_repair_requests(self, msg: SdsMessage, now: int) -> None:
        for pb in msg.repair_request:
            mid = pb.message_id
            # Someone else asked: we need not ask too (limits request storms).
            self._repair_out.discard(mid)
            if mid in self._repair_in or mid not in self._repair_cache:
                continue
            sender = pb.sender_id or self._log[mid].sender_id
            if is_responder(self.sender_id, sender, mid, self.config):
                self._repair_in.set(mid, response_at(now, self.sender_id, sender, mid, self.config))

    # -------------------------------------------------------------- delivery

    def _deliver(self, ready: list[_Pending]) -> None:
        """Deliver ``ready`` and, transitively, every buffered message whose
        last unmet dependency that makes available."""
        while ready:
            pending = ready.pop()
            mid = pending.msg.message_id
            self._insert(pending.msg, pending.wire, pending.received_at, gaps=tuple(pending.gaps))
            ready.extend(self._satisfy(mid))

    def _satisfy(self, dep: str, *, lost: bool = False) -> list[_Pending]:
        """``dep`` is no longer unmet; return the buffered messages it frees,
        latest last-popped first so they are delivered in log order."""
        self._forget_missing(dep)
        freed: list[_Pending] = []
        for waiter in self._waiters.pop(dep, ()):
            pending = self._incoming.get(waiter)
            if pending is None:
                continue
            pending.unmet.discard(dep)
            if lost:
                pending.gaps.append(dep)
            if not pending.unmet:
                del self._incoming[waiter]
                freed.append(pending)
        freed.sort(key=lambda p: p.key, reverse=True)
        return freed

    def _insert(self, msg: SdsMessage, wire: bytes, received_at: int, own: bool = False, gaps: tuple = ()) -> None:
        mid, lamport, sender = msg.message_id, msg.lamport_timestamp, msg.sender_id
        key = (lamport, mid)
        self._order.add(key)
        hint = self._hint_for(mid, sender, msg.content) if self._hint_for else None
        if hint is None and mid in self._missing:
            hint = self._missing[mid].retrieval_hint
        self._log[mid] = _LogEntry(lamport, sender, hint)
        self._recent.append(mid)
        self._lost.pop(mid, None)
        if lamport > self._lamport:
            self._lamport = lamport
        if own or is_responder(self.sender_id, sender, mid, self.config):
            cache = self._repair_cache
            cache[mid] = wire
            if len(cache) > self.config.repair_cache_size:
                cache.popitem(last=False)
        self.stats["delivered"] += 1
        self._events.append(
            Delivered(
                message_id=mid,
                sender_id=sender,
                lamport=lamport,
                content=msg.content,
                position=self._order.bisect_left(key),
                causal_history=tuple(entry_from_pb(pb) for pb in msg.causal_history),
                wire=wire,
                received_at=received_at,
                own=own,
                gaps=gaps,
            )
        )

    def _give_up(self, dep: str) -> None:
        """``dep`` was not found in time: treat it as lost and release what
        waits for it. (A dependency that is itself buffered is only given up
        as a dependency; it is still delivered once its own wait ends.)"""
        if dep in self._log:
            return
        entry = self._missing.get(dep)
        if entry is not None:
            self._lost[dep] = None
            if len(self._lost) > self.config.max_missing:
                del self._lost[next(iter(self._lost))]  # referenced again, it is waited for again
            self.stats["lost"] += 1
        freed = self._satisfy(dep, lost=True)
        if entry is not None:
            self._events.append(Lost(entry, tuple(p.msg.message_id for p in reversed(freed))))
        self._deliver(freed)

    # ----------------------------------------------------------------- timer

    def get_timer(self) -> int | None:
        """The next absolute time (ms) at which ``handle_timer`` has work."""
        candidates = [
            self._sync_at,
            self._resend.next_due(),
            self._watch.next_due(),
            self._give_up_at.next_due(),
            self._repair_in.next_due(),
            self._next_sweep,
            self._peers.next_expiry(),
        ]
        return min(t for t in candidates if t is not None)

    def handle_timer(self, now: int) -> None:
        config = self.config
        for mid in self._resend.pop_due(now):
            out = self._outgoing[mid]
            if out.possible_by and self._acknowledged_by_blooms(out, now):
                self._acknowledge(mid, out, "bloom", now)  # the peers lacking it went quiet
                continue
            self._rebroadcast(out, "resent", now)
            period = config.resend_possibly_acknowledged_ms if out.possible_by else config.resend_unacknowledged_ms
            self._resend.set(mid, now + period)
        for mid in self._watch.pop_due(now):
            self._check_watched(mid, now)
        for dep in self._give_up_at.pop_due(now):
            self._give_up(dep)
        self._peers.expire(now)
        if self._next_sweep is not None and now >= self._next_sweep:
            if self._missing:
                self._events.append(Missing(tuple(self._missing.values()), len(self._incoming)))
                self._next_sweep = now + config.sweep_interval_ms
            else:
                self._next_sweep = None
        for mid in self._repair_in.pop_due(now):
            wire = self._repair_cache.get(mid)
            if wire is not None:
                self._outbox.append(self._bloom.readable(wire, now, self.sender_id))
                self.stats["repair_sent"] += 1
                self._events.append(RepairSent(mid))
        if now >= self._sync_at:
            self._periodic_sync(now)

    def _rebroadcast(self, out: _OwnMessage, counter: str, now: int) -> None:
        # Sent before a participant of the other dialect was heard? Then its
        # filter is refitted, or that participant would drop it again.
        out.wire = self._bloom.readable(out.wire, now, self.sender_id)
        self._outbox.append(out.wire)
        out.resends += 1
        self.stats[counter] += 1

    def _periodic_sync(self, now: int) -> None:
        quiet = self._last_activity < self._sync_due
        repair_due = (self._repair_out.next_due() or now + 1) <= now
        keepalive = now - self._last_sent >= 2 * self.config.sync_interval_ms
        if quiet or repair_due or keepalive:
            self._send_sync(now)
        else:
            self.stats["sync_suppressed"] += 1
        self._schedule_sync(now)

    def _schedule_sync(self, now: int) -> None:
        self._sync_round += 1
        backoff = hash64(self.sender_id, self.channel_id, str(self._sync_round)) % (self.config.sync_backoff_ms + 1)
        self._sync_due = now + self.config.sync_interval_ms
        self._sync_at = self._sync_due + backoff

    # ---------------------------------------------------------------- output

    def events(self) -> Iterator[Event]:
        """Drain the events produced since the last call."""
        events, self._events = self._events, []
        return iter(events)

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        """Drain the datagrams to send, oldest first: all broadcast to the
        channel (fetch answers to one peer are the runtime's business)."""
        out, self._outbox = self._outbox, []
        return [Outgoing(wire, BROADCAST) for wire in out]

    # ----------------------------------------------------------- persistence

    def export_state(self, include_log: bool = True) -> dict:
        """Everything needed to rebuild this channel exactly, as plain data
        (str, int, float, bytes, lists, dicts): CBOR- and pickle-friendly.
        Derived indexes (waiters, unmet sets) are rebuilt on restore.

        A runtime that stores every ``Delivered`` message itself passes
        ``include_log=False``: the state then stays small however long the
        history, and ``restore(..., log=rows)`` rebuilds the log and the
        repair cache from those rows.
        """
        state = {
            "version": STATE_VERSION,
            "channel_id": self.channel_id,
            "sender_id": self.sender_id,
            "lamport": self._lamport,
            "lost": list(self._lost),
            "recent": list(self._recent),
            "bloom": self._bloom.export(),
            "outgoing": [_outgoing_state(mid, out, self._resend) for mid, out in self._outgoing.items()],
            "watched": [_outgoing_state(mid, out, self._watch) for mid, out in self._watched.items()],
            "filters": self._peers.export()[1],
            "incoming": [[p.wire, p.received_at, list(p.gaps)] for p in self._incoming.values()],
            "missing": [_entry_state(e) for e in self._missing.values()],
            "give_up_at": [[dep, at] for dep, at in self._give_up_at.items()],
            "next_sweep": self._next_sweep,
            "repair_out": [[*_entry_state(self._repair_entries[mid]), at] for mid, at in self._repair_out.items()],
            "repair_in": [[mid, at] for mid, at in self._repair_in.items()],
            "sync": [self._sync_round, self._sync_due, self._sync_at, self._last_activity, self._last_sent],
            "heard": self._peers.export()[0],
            "outbox": list(self._outbox),
            "stats": dict(self.stats),
        }
        if include_log:
            state["log"] = [[lamport, mid, self._log[mid].sender_id, self._log[mid].retrieval_hint]
                            for lamport, mid in self._order]
            state["repair_cache"] = [[mid, wire] for mid, wire in self._repair_cache.items()]
        return state

    @classmethod
    def restore(
        cls,
        state: dict,
        config: Config | None = None,
        retrieval_hint: HintFunction | None = None,
        log: Iterable[tuple[int, str, str, bytes | None, bytes]] | None = None,
    ) -> Channel:
        """Rebuild a channel from ``export_state()``; pending events are not
        part of the state (the caller handled them before saving).

        ``log`` - ``(lamport, message_id, sender_id, retrieval_hint, wire)``
        rows in log order - replaces a log left out of the state.
        """
        if state.get("version") != STATE_VERSION:
            raise LocalProtocolError(f"unknown channel state version {state.get('version')!r}")
        ch = cls(state["channel_id"], state["sender_id"], state["lamport"], config, retrieval_hint)
        config = ch.config
        ch._lamport = state["lamport"]
        if log is None:
            rows = state["log"]
            ch._repair_cache = OrderedDict((mid, wire) for mid, wire in state["repair_cache"])
        else:
            rows = []
            for lamport, mid, sender, hint, wire in log:
                rows.append((lamport, mid, sender, hint))
                if sender == ch.sender_id or is_responder(ch.sender_id, sender, mid, config):
                    ch._repair_cache[mid] = wire
                    if len(ch._repair_cache) > config.repair_cache_size:
                        ch._repair_cache.popitem(last=False)
        for lamport, mid, sender, hint in rows:
            ch._order.add((lamport, mid))
            ch._log[mid] = _LogEntry(lamport, sender, hint)
        ch._lost = dict.fromkeys(state["lost"])
        ch._recent.extend(state["recent"])
        ch._bloom = ReceivedFilter.restore(state["bloom"], config, state["filters"])
        for buffer, schedule, key in ((ch._outgoing, ch._resend, "outgoing"), (ch._watched, ch._watch, "watched")):
            for mid, wire, sent_at, possible_by, log_fp, resends, due in state[key]:
                buffer[mid] = _OwnMessage(wire, sent_at, set(possible_by), log_fp, resends)
                if due is not None:
                    schedule.set(mid, due)
        for entry in state["missing"]:
            e = _entry_from_state(entry)
            ch._missing[e.message_id] = e
        for wire, received_at, gaps in state["incoming"]:
            msg = decode(wire, config)
            unmet = {pb.message_id for pb in msg.causal_history
                     if pb.message_id not in ch._log and pb.message_id not in ch._lost}
            ch._incoming[msg.message_id] = _Pending(msg, wire, received_at, unmet, list(gaps))
            for dep in unmet:
                ch._waiters.setdefault(dep, []).append(msg.message_id)
        for dep, at in state["give_up_at"]:
            ch._give_up_at.set(dep, at)
        ch._next_sweep = state["next_sweep"]
        for *entry, at in state["repair_out"]:
            e = _entry_from_state(entry)
            ch._repair_entries[e.message_id] = e
            ch._repair_out.set(e.message_id, at)
        for mid, at in state["repair_in"]:
            ch._repair_in.set(mid, at)
        ch._sync_round, ch._sync_due, ch._sync_at, ch._last_activity, ch._last_sent = state["sync"]
        ch._peers.restore(state["heard"], state["filters"])
        ch._outbox = list(state["outbox"])
        ch.stats = Counter(state["stats"])
        return ch


def _checked_content(content: bytes) -> bytes:
    if not isinstance(content, (bytes, bytearray)) or not content:
        raise LocalProtocolError("content must be non-empty bytes")
    return bytes(content)


def _outgoing_state(mid: str, out: _OwnMessage, schedule: Schedule[str]) -> list:
    return [mid, out.wire, out.sent_at, sorted(out.possible_by), out.log_fp, out.resends, schedule.get(mid)]


def _entry_state(entry: HistoryEntry) -> list:
    return [entry.message_id, entry.retrieval_hint, entry.sender_id]


def _entry_from_state(state: list) -> HistoryEntry:
    return HistoryEntry(*state)
