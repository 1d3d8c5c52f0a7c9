"""One participant's view of one SDS channel.

Theory of operation
-------------------

A ``Channel`` keeps a Lamport clock in epoch milliseconds, set to
``max(now, clock + 1)`` for every message we send (content or sync) and
raised to any timestamp we deliver, and coordinates the parts that hold
everything else SDS asks a participant to keep, as aioquic's connection
owns its recovery and stream objects:

* ``LocalLog`` (``log``): the delivered ids in ``(lamport, message_id)``
  order, and the causal history we attach - the messages most recently
  *delivered* (own or received). Each has a lower Lamport timestamp than
  anything we send next, so they are true causal predecessors; choosing by
  delivery rather than position means a message that reached us late is
  still cited once, which is how peers that missed it learn it exists;
* a rolling bloom filter of the content-message ids we have received;
* ``Composer``: our messages as they go on the wire, with the clock, the
  history, the filter and the SDS-R requests each carries;
* ``OutgoingBuffer`` (``outgoing``): our messages until acknowledged, their
  resends (backed off, and capped in rate), and the watch after that;
* ``IncomingBuffer`` (``incoming``): messages waiting for their history,
  the missing ids they wait for, and SDS-R requests for those, each charged
  to a sender and bounded per sender and in all (``holdings``);
* ``Delivery`` (``delivery``): into the log, with everything that frees,
  and giving up on what is lost;
* ``Responses`` (``repair``): SDS-R rebroadcasts we owe others;
* ``Participants`` (``participants``): who we heard from lately, bounded.

The engine is sans-I/O and follows ``sync.core``: ``receive`` takes bytes
(``receive_message`` takes them already parsed and checked by ``parse``, so
that a router which had to read the protobuf - the channel, the sender, the
id - does not make the engine read or hash it again), ``send`` takes
content, both take ``now``; the caller drains ``events()`` and
``datagrams_to_send(now)`` and calls ``handle_timer(now)`` at
``get_timer()``. Everything periodic - resends, the watch, lost
deadlines, sync messages, repair, forgetting participants - happens there,
each from a keyed ``Schedule`` so nothing is ever scanned. Every datagram is
validated (``validate``) before anything else looks at it, and everything a
datagram can make the channel keep is bounded in count and in bytes.

Randomness (the sync backoff) is derived by hashing our id with a round
counter, so a channel is a deterministic function of its inputs and its
exported state, which is what lets a crashed peer resume exactly
(``export_state`` / ``restore``, or incrementally ``take_changes``: see
``state``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sync.core import BROADCAST, Outgoing

from . import state
from .compose import Composer
from .config import Config
from .dialects import ReceivedFilter
from .errors import LocalProtocolError, RemoteProtocolError
from .delivery import Delivery, HintFunction
from .events import Buffered, EphemeralReceived, Event, HistoryEntry, Rejected, RepairSent
from .incoming import IncomingBuffer
from .log import LocalLog, LogView
from .outgoing import OutgoingBuffer
from .output import Output
from .participants import Participants
from .repair import Responses
from .sync_timer import SyncTimer
from .validate import channel_id_problem, sender_id_problem
from .wire import Checked, check_clock, checked

__all__ = ["Channel", "HintFunction", "LogView"]

class Channel:
    """SDS for one channel, seen by participant ``sender_id``."""

    def __init__(self, channel_id: str, sender_id: str, now: int, config: Config | None = None,
                 retrieval_hint: HintFunction | None = None, *, saved: dict | None = None,
                 log: Iterable[tuple[int, str, str, bytes | None, bytes]] | None = None) -> None:
        """``saved`` and ``log``: what ``restore`` resumes from (``now`` is then the saved clock)."""
        problem = sender_id_problem(sender_id) or channel_id_problem(channel_id)
        if problem:
            raise LocalProtocolError(problem)
        self.channel_id, self.sender_id = channel_id, sender_id
        self.config = config = config or Config()
        self._out = Output()
        self._bloom = ReceivedFilter(config)
        self._log = LocalLog(config.causal_history_size, config.max_lost)
        self._peers = Participants(config.max_participants, config.lost_after_ms, config.max_filter_bytes)
        self._outgoing = OutgoingBuffer(config, self._peers, self._out, refit=self._readable,
                                        log_size=lambda: len(self._log))
        self._incoming = IncomingBuffer(config, sender_id, self._log, self._out)
        self._composer = Composer(channel_id, sender_id, config, self._log, self._incoming, self._out, now)
        self._repair = Responses(config, sender_id)
        self._delivery = Delivery(self._log, self._incoming, self._repair, self._out, retrieval_hint)
        self._sync = SyncTimer(config, sender_id, channel_id, now)
        if saved is not None:
            self._restore_parts(saved, log)

    # ------------------------------------------------------------------ views

    @property
    def log(self) -> LogView:
        return LogView(self._log.order)

    @property
    def lamport(self) -> int:
        """Our clock: raised by every send, and to every timestamp delivered
        (the newest in the log)."""
        return self._composer.lamport

    @property
    def stats(self):
        return self._out.stats

    def unacknowledged(self) -> dict[str, int]:
        """Our messages still in the outgoing buffer -> distinct peers whose
        bloom filters hold them (0 means unacknowledged)."""
        return {mid: out.peers for mid, out in self._outgoing.unacked.items()}

    def in_flight(self, since: int, limit: int) -> int:
        """Our messages sent at or after ``since`` that no peer has shown to
        hold yet (by causal history or bloom filter), counted newest first up
        to ``limit`` (so the cost is bounded)."""
        count = 0
        for out in reversed(self._outgoing.unacked.values()):  # insertion order is sending order
            if count >= limit or out.sent_at < since:
                break
            count += not out.peers
        return count

    @property
    def participants(self) -> int:
        """Peers heard from lately (within ``lost_after_ms``): who could
        acknowledge what we send."""
        return len(self._peers)

    @property
    def waiting(self) -> int:
        """Messages in the incoming buffer (unmet dependencies)."""
        return len(self._incoming)

    def missing(self) -> tuple[HistoryEntry, ...]:
        return tuple(m.entry for m in self._incoming.missing.values())

    def is_missing(self, message_id: str) -> bool:
        """Is ``message_id`` wanted: named as history, and neither held nor given up?"""
        return self._incoming.is_missing(message_id)

    # ---------------------------------------------------------------- sending

    def send(self, content: bytes, now: int, decoded: object = None) -> str:
        """Broadcast ``content``; returns its message id. ``decoded``: what
        ``content`` encodes, handed back at its delivery (``Delivered.decoded``)."""
        message_id, msg, wire = self._composer.message(_checked_content(content), self._bloom.to_bytes(now), now)
        self._sync.heard(now, content=True)
        self._sync.last_sent = now
        self._out.transmit(wire)
        self._outgoing.add(message_id, wire, now)
        self._delivery.insert(msg, wire, now, own=True, decoded=decoded)
        self.stats["sent"] += 1
        return message_id

    def send_ephemeral(self, content: bytes, now: int) -> str:
        """Broadcast ``content`` once: no Lamport, history, bloom or buffering."""
        message_id, wire = self._composer.ephemeral(_checked_content(content))
        self._out.transmit(wire)
        self.stats["sent_ephemeral"] += 1
        return message_id

    def _send_sync(self, now: int) -> None:
        self._out.transmit(self._composer.sync(self._bloom.to_bytes(now), now))  # the filter in the dialect spoken
        self._sync.last_sent = now
        self.stats["sync_sent"] += 1

    # -------------------------------------------------------------- receiving

    def parse(self, data: bytes) -> Checked:
        """``data`` parsed and checked, for ``receive_message``; raises
        ``RemoteProtocolError`` for anything malformed or forged."""
        return checked(data, self.config)

    def receive(self, data: bytes, now: int, source: object = None) -> None:
        """Process one datagram from the network. Never raises for bad input.
        (``source`` is accepted as every engine does; SDS names its peers by
        the sender id inside the message.)"""
        try:
            parsed = checked(data, self.config)
        except RemoteProtocolError as exc:
            self.stats["received"] += 1
            self._reject(exc)
            return
        self.receive_message(parsed, now, source)

    def receive_message(self, parsed: Checked, now: int, source: object = None) -> None:
        """``receive`` for a datagram already parsed and checked (``parse``,
        or a router's ``wire.checked``): only what depends on this receiver -
        its clock - is checked here. Checked against other bounds than this
        channel's, it is checked again."""
        # A field of the protobuf is made into a Python value each time it is
        # read: each is read once, here, and the history's ids come from the check.
        stats = self.stats
        stats["received"] += 1
        msg, cited = parsed.msg, parsed.history
        try:
            if parsed.config is not self.config and parsed.config != self.config:
                again = checked(parsed.data, self.config)
                msg, cited = again.msg, again.history
            check_clock(msg, self.config, now, lambda: self.lamport)
        except RemoteProtocolError as exc:
            self._reject(exc)
            return
        data = parsed.data
        if msg.channel_id != self.channel_id:
            stats["other_channel"] += 1
            return
        mid, sender = msg.message_id, msg.sender_id
        # SDS-R: whoever holds this message, nobody needs to ask or answer for it.
        self._incoming.drop_request(mid)
        self._repair.seen(mid)
        if sender == self.sender_id:
            stats["echo"] += 1
            return
        self._peers.heard(sender, now)
        if not msg.HasField("lamport_timestamp"):  # content without a timestamp (see ``validate``)
            stats["ephemeral"] += 1
            self._out.emit(EphemeralReceived(sender, msg.content, now))
            return
        content = msg.content
        if content and mid in self._incoming:
            freed = self._incoming.supersede(msg, data, cited)
            self._delivery.deliver([freed] if freed else [])
            return
        if content and mid in self._log:
            stats["duplicate"] += 1
            return
        self._sync.heard(now, content=bool(content))
        if msg.HasField("bloom_filter"):
            bloom = msg.bloom_filter
            self._peers.set_filter(sender, bloom, now)  # for the watch, on the timer
            self._bloom.heard(sender, bloom, now)
        self._outgoing.review(msg, cited, now)
        for pb in msg.repair_request:
            self._incoming.drop_request(pb.message_id)  # someone else asked: we need not (limits request storms)
            self._repair.asked(pb.message_id, pb.sender_id or self._log.sender_of(pb.message_id), now)
        if not content:
            stats["sync_received"] += 1
            self._incoming.named(msg, now)
            return
        ready = self._incoming.arrive(msg, data, cited, now, parsed.decoded)
        if ready is None and mid not in self._incoming:
            return  # refused (the buffer said why)
        self._bloom.add(mid)
        if ready is None:
            stats["buffered"] += 1
            unmet = tuple(sorted(self._incoming.pending[mid].unmet))
            self._out.emit(Buffered(mid, sender, msg.lamport_timestamp, content, unmet))
        else:
            self._delivery.deliver([ready])

    def _reject(self, exc: RemoteProtocolError) -> None:
        self.stats[exc.kind] += 1
        self._out.emit(Rejected(exc.kind, str(exc)))

    # ----------------------------------------------------------------- timer

    def get_timer(self) -> int | None:
        """The next absolute time (ms) at which ``handle_timer`` has work."""
        candidates = (self._sync.at, self._sync.settle_at, self._outgoing.next_due(),
                      self._incoming.give_up_at.next_due(), self._repair.due.next_due(), self._peers.next_expiry())
        return min(t for t in candidates if t is not None)

    def handle_timer(self, now: int) -> None:
        self._outgoing.handle_timer(now)
        for dep in self._incoming.due_give_ups(now):
            self._delivery.give_up(dep)
        self._peers.expire(now)
        for mid, wire in self._repair.pop_due(now):
            self._out.transmit(self._readable(wire, now))
            self.stats["repair_sent"] += 1
            self._out.emit(RepairSent(mid))
        if self._sync.settle_at is not None and now >= self._sync.settle_at:
            if self._sync.should_settle():
                self._send_sync(now)
                self.stats["sync_settle"] += 1
            else:
                self.stats["sync_suppressed"] += 1
        if now >= self._sync.at:
            if self._sync.should_send(now, repair_due=(self._incoming.requests.next_due() or now + 1) <= now):
                self._send_sync(now)
            else:
                self.stats["sync_suppressed"] += 1

    def _readable(self, wire: bytes, now: int) -> bytes:
        """A message sent again, with a filter every participant can read:
        ours refitted, someone else's dropped (see ``dialects``)."""
        return self._bloom.readable(wire, now, self.sender_id)

    # ---------------------------------------------------------------- output

    def events(self) -> Iterator[Event]:
        """Drain the events produced since the last call."""
        return iter(self._out.drain_events())

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        """Drain the datagrams to send, oldest first: all broadcast to the
        channel (fetch answers to one peer are the runtime's business)."""
        return [Outgoing(wire, BROADCAST) for wire in self._out.drain_datagrams()]

    # ----------------------------------------------------------- persistence

    # Each part exports, marks and restores what it keeps; here they are put
    # together in the layout ``state`` describes (its parts and collections).

    def export_state(self, include_log: bool = True) -> dict:
        """Everything needed to rebuild this channel exactly, as plain data;
        see ``state`` for the format and ``include_log``. Starts a new round
        of ``take_changes``."""
        self._mark_saved()
        bloom = self._bloom.export()
        saved = {"version": state.STATE_VERSION, "channel_id": self.channel_id, "sender_id": self.sender_id,
                 "clock": self._clock(), "bloom": bloom["bloom"], **self._outgoing.export(),
                 **self._incoming.export(), **self._repair.export(), **self._log.export(), **self._peers.export(),
                 "bloom_ids": bloom["bloom_ids"]}
        if include_log:
            saved["log"] = self._log.rows()
            saved["repair_cache"] = self._repair.export_cache()
        return saved

    def take_changes(self) -> dict:
        """What changed since the last ``take_changes`` or ``export_state``:
        see ``state`` for the contract. Runs after every step: each part
        reports only the entries it marked."""
        parts = {"clock": self._clock()}
        if self._bloom.changed():
            parts["bloom"] = self._bloom.export_part()
        entries = {**self._outgoing.changes(), **self._incoming.changes(), **self._repair.changes(),
                   **self._log.changes(), **self._peers.changes(), **self._bloom.changes()}
        self._mark_saved()
        return {"parts": parts, "entries": entries}

    @classmethod
    def restore(cls, saved: dict, config: Config | None = None, retrieval_hint: HintFunction | None = None,
                log: Iterable[tuple[int, str, str, bytes | None, bytes]] | None = None) -> Channel:
        """Rebuild a channel from ``export_state()`` (of this version or an
        earlier one); pending events are not part of the state (the caller
        handled them before saving).

        ``log`` - ``(lamport, message_id, sender_id, retrieval_hint, wire)``
        rows in log order - replaces a log left out of the state.
        """
        saved = state.upgrade(saved)
        return cls(saved["channel_id"], saved["sender_id"], saved["clock"]["lamport"], config, retrieval_hint,
                   saved=saved, log=log)

    def _clock(self) -> dict:
        """The ``clock`` part: small, and rewritten every step."""
        out_stamp, tat = self._outgoing.counters()
        return {"lamport": self.lamport, "recent": self._log.export_recent(), "sync": self._sync.export(),
                "stamps": [out_stamp, *self._incoming.counters(), *self._peers.counters(), tat,
                           *self._log.counters()],
                **self._out.export()}

    def _mark_saved(self) -> None:
        for part in (self._outgoing, self._incoming, self._repair, self._log, self._peers, self._bloom):
            part.mark_saved()

    def _restore_parts(self, saved: dict, log: Iterable[tuple[int, str, str, bytes | None, bytes]] | None) -> None:
        """Each part back to what it exported; the log first (what waits is
        checked against it), the peers before the filter (whose dialect
        they speak)."""
        clock = saved["clock"]
        out_stamp, in_stamp, peers_stamp, tat, lost_stamp = clock["stamps"]
        if log is None:
            self._log.load(saved["log"])
            for mid, wire in saved["repair_cache"]:
                self._repair.keep(mid, wire)
        else:
            rows = []
            for lamport, mid, sender, hint, wire in log:
                rows.append((lamport, mid, sender, hint))
                self._repair.remember(mid, sender, wire, own=sender == self.sender_id)
            self._log.load(rows)
        self._log.restore(saved, clock["recent"], (lost_stamp,))
        self._outgoing.restore(saved, (out_stamp, tat))
        self._peers.restore(saved, (peers_stamp,))
        self._bloom.restore(saved, self._peers.latest_filters())
        self._incoming.restore(saved, (in_stamp,))
        self._repair.restore(saved)
        self._sync.restore(clock["sync"])
        self._out.restore(clock)
        self._mark_saved()  # a restore starts a round of ``take_changes``, as ``export_state`` does


def _checked_content(content: bytes) -> bytes:
    if not isinstance(content, (bytes, bytearray)) or not content:
        raise LocalProtocolError("content must be non-empty bytes")
    return bytes(content)
