"""Our own messages until every participant holds them: the outgoing buffer.

Each message is *unacknowledged* until some peer's bloom filter holds it,
then *possibly acknowledged* (counted per distinct peer) and finally
*acknowledged* when it appears in a peer's causal history, or when bloom
filters settle it: all of those holding it being false positives is less
likely than ``Config.ack_certainty`` and every recently heard participant
holds it.

Unacknowledged and possibly acknowledged messages are rebroadcast, each on
its own period that doubles with every resend up to
``resend_max_interval_ms`` - a message nobody took after a few tries is
most likely waiting for an absent peer, and resending it every period would
make the cost of a lone peer grow with everything it ever said. All resends
together are held to ``max_resends_per_s``, and to ``max_resent_copies_per_s``
counting a copy for each participant (a token bucket kept as a theoretical
arrival time, so its whole state is one integer).

An acknowledgement proves that one peer holds a message, not that all do,
so acknowledged messages are *watched* (see ``_acknowledge``).

Who holds a message is counted (``peers``, what the delivery state shows)
and, for the participants among them, remembered by name (``possible_by``:
what the coverage rules ask about). Anyone can name our messages under
made-up sender ids, so the names kept never outnumber the participants
table: when the set is full, those no longer in the table are let go.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from sync.core import Schedule

from .dialects import read_filter
from .changed import ChangedKeys
from .config import Config
from .errors import RemoteProtocolError
from .events import Acknowledged, AcknowledgedByMore, PossiblyAcknowledged
from .output import Output
from .participants import Participants
from .wire import SdsMessage

_MIN_LOG_FP = math.log(1e-300)
RESEND_BURST_MS = 1000


@dataclass(slots=True)
class OwnMessage:
    wire: bytes
    sent_at: int
    stamp: int  # insertion order, kept across restores
    possible_by: set[str] = field(default_factory=set)  # participants known to hold it (see _credit)
    log_fp: float = 0.0  # sum of ln(false-positive rate) of the filters that held it
    resends: int = 0
    log_size: int = 0  # messages in our log when it was sent (see _check_watched)
    peers: int = 0  # distinct peers counted as holding it


class OutgoingBuffer:
    def __init__(self, config: Config, peers: Participants, out: Output,
                 refit: Callable[[bytes, int], bytes], log_size: Callable[[], int]) -> None:
        self.config, self._peers, self._out = config, peers, out
        self._refit = refit  # a resend in the filter dialect the channel speaks now (dialects.py)
        self._log_size = log_size  # how many messages our log holds
        self.unacked: dict[str, OwnMessage] = {}
        self.resend: Schedule[str] = Schedule()
        self.watched: OrderedDict[str, OwnMessage] = OrderedDict()
        self.watch: Schedule[str] = Schedule()
        self._tat = 0  # theoretical arrival time of the next resend (token bucket)
        self._stamp = 0  # orders both buffers across restores: insertion order
        self._dirty = ChangedKeys("outgoing", "watched")

    # --------------------------------------------------------------- adding

    def add(self, message_id: str, wire: bytes, now: int) -> None:
        self.unacked[message_id] = OwnMessage(wire, now, self._next_stamp(), log_size=self._log_size())
        self.resend.set(message_id, now + self.config.resend_unacknowledged_ms)
        self._dirty["outgoing"].add(message_id)

    # ------------------------------------------------------------ reviewing

    def review(self, msg: SdsMessage, cited: tuple[str, ...], now: int) -> None:
        """What ``msg`` (from another participant), whose causal history names
        ``cited`` (``Checked.history``), says about ours."""
        peer = msg.sender_id
        for mid in cited:
            out = self.unacked.get(mid) or self.watched.get(mid)
            if out is not None:
                counted = self._credit(out, peer)
                if mid in self.unacked:
                    self._acknowledge(mid, out, "causal_history", now)
                elif counted:
                    self._dirty["watched"].add(mid)
                    self._out.emit(AcknowledgedByMore(mid, out.peers))
        if not self.unacked or not msg.HasField("bloom_filter"):
            return
        try:
            bloom = read_filter(msg.bloom_filter)
        except RemoteProtocolError as exc:
            self._out.stats[exc.kind] += 1
            return
        log_fp: float | None = None
        for mid, out in list(self.unacked.items()):
            if peer in out.possible_by or mid not in bloom:
                continue
            if log_fp is None:
                log_fp = max(math.log(bloom.false_positive_rate() or 1e-300), _MIN_LOG_FP)
            self._credit(out, peer)
            out.log_fp += log_fp
            self._dirty["outgoing"].add(mid)
            if self._acknowledged_by_blooms(out, now):
                self._acknowledge(mid, out, "bloom", now)
                continue
            if out.peers == 1:
                self.resend.set(mid, now + self._period(out))
            self._out.emit(PossiblyAcknowledged(mid, out.peers))

    def _credit(self, out: OwnMessage, peer: str) -> bool:
        """Count ``peer`` (a participant, just heard) as holding ``out``;
        False if it was counted already."""
        if peer in out.possible_by:
            return False
        if len(out.possible_by) >= self.config.max_participants:
            out.possible_by = {p for p in out.possible_by if p in self._peers}
        out.possible_by.add(peer)
        out.peers += 1
        return True

    def _acknowledged_by_blooms(self, out: OwnMessage, now: int) -> bool:
        """Certain enough that these filters are not all false positives, and
        no active participant is left whose filter lacks the message."""
        return out.log_fp <= self.config.log_ack_certainty and self._covered(
            out, now - self.config.participant_timeout_ms
        )

    def _covered(self, out: OwnMessage, horizon: int) -> bool:
        """Has every participant heard from since ``horizon`` shown ``out``?"""
        return all(peer in out.possible_by for peer, at in self._peers.items() if at > horizon)

    def _acknowledge(self, message_id: str, out: OwnMessage, via: str, now: int) -> None:
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
        del self.unacked[message_id]
        self.resend.discard(message_id)
        self._out.stats["acknowledged"] += 1
        self._out.emit(Acknowledged(message_id, via, out.peers))
        out.stamp = self._next_stamp()
        self.watched[message_id] = out
        self.watch.set(message_id, now + self.config.resend_possibly_acknowledged_ms)
        self._dirty["outgoing"].add(message_id)
        self._dirty["watched"].add(message_id)
        if len(self.watched) > self.config.max_watched:
            oldest, _ = self.watched.popitem(last=False)
            self.watch.discard(oldest)
            self._dirty["watched"].add(oldest)

    def _next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    # ---------------------------------------------------------------- timer

    def next_due(self) -> int | None:
        candidates = [self.watch.next_due()]
        due = self.resend.next_due()
        if due is not None:
            candidates.append(max(due, self._earliest_resend()))
        return min((t for t in candidates if t is not None), default=None)

    def handle_timer(self, now: int) -> None:
        while self.resend.next_due() is not None and self.resend.next_due() <= now:
            if not self._may_resend(now):
                self._out.stats["resend_deferred"] += 1
                break
            (mid,) = self.resend.pop_due(now, 1)
            out = self.unacked[mid]
            self._dirty["outgoing"].add(mid)
            if out.peers and self._acknowledged_by_blooms(out, now):
                self._acknowledge(mid, out, "bloom", now)  # the peers lacking it went quiet
                continue
            self._rebroadcast(out, "resent", now)
            self.resend.set(mid, now + self._period(out))
        for mid in self.watch.pop_due(now):
            self._check_watched(mid, now)

    def _period(self, out: OwnMessage) -> int:
        """The wait before the next resend: the base period for its state,
        doubled for every resend so far, at most ``resend_max_interval_ms``."""
        config = self.config
        base = config.resend_possibly_acknowledged_ms if out.peers else config.resend_unacknowledged_ms
        return min(base << min(out.resends, 32), max(base, config.resend_max_interval_ms))

    def _interval(self) -> int:
        config = self.config
        per_s = min(config.max_resends_per_s, max(1, config.max_resent_copies_per_s // max(1, len(self._peers))))
        return max(1, 1000 // per_s)

    def _earliest_resend(self) -> int:
        """A second's worth of resends may go at once (the bucket's depth),
        then one per interval."""
        return self._tat - RESEND_BURST_MS + self._interval()

    def _may_resend(self, now: int) -> bool:
        if now < self._earliest_resend():
            return False
        self._tat = max(self._tat, now) + self._interval()
        return True

    def _rebroadcast(self, out: OwnMessage, counter: str, now: int) -> None:
        out.wire = self._refit(out.wire, now)
        self._out.transmit(out.wire)
        out.resends += 1
        self._out.stats[counter] += 1

    def _check_watched(self, message_id: str, now: int) -> None:
        out = self.watched[message_id]
        config = self.config
        self._dirty["watched"].add(message_id)
        if self._log_size() - out.log_size >= config.bloom_capacity // 2:
            # A filter is sure to hold only its newest half: after this many
            # messages, one lacking ours says nothing, now or later (in a busy
            # channel that rebroadcast nearly every message to everyone). A
            # peer that did miss it finds the gap in our sequence numbers.
            del self.watched[message_id]
            self._out.stats["watch_rolled_past"] += 1
            return
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
                self._credit(out, peer)
                self._out.emit(AcknowledgedByMore(message_id, out.peers))
            else:
                lacking = True
        age = now - out.sent_at
        if age >= config.lost_after_ms or (age >= config.participant_timeout_ms and self._covered(out, horizon)):
            del self.watched[message_id]
            return
        if lacking:
            self._rebroadcast(out, "rebroadcast_uncovered", now)
        self.watch.set(message_id, now + config.resend_possibly_acknowledged_ms)

    # ----------------------------------------------------------- persistence
    # A store keeps ``outgoing`` and ``watched`` entry by entry, so every
    # change is marked in ``_dirty`` until ``mark_saved``.

    def export(self) -> dict[str, dict[str, list]]:
        """Both buffers as plain data: ``{"outgoing": ..., "watched": ...}``."""
        return {name: {mid: self._export_entry(name, mid) for mid in buffer}
                for name, buffer in (("outgoing", self.unacked), ("watched", self.watched))}

    def changes(self) -> dict[str, dict[str, list | None]]:
        """The entries changed since ``mark_saved``, shaped as ``export`` but
        only the collections that changed; None: gone."""
        return self._dirty.export(self._export_entry)

    def mark_saved(self) -> None:
        self._dirty.mark_saved()

    def counters(self) -> tuple[int, int]:
        """The insertion stamp and the resend bucket's theoretical arrival time."""
        return self._stamp, self._tat

    def _export_entry(self, name: str, message_id: str) -> list | None:
        buffer, schedule = (self.unacked, self.resend) if name == "outgoing" else (self.watched, self.watch)
        out = buffer.get(message_id)
        if out is None:
            return None
        return [out.wire, out.sent_at, out.stamp, sorted(out.possible_by), out.log_fp, out.resends,
                schedule.get(message_id), out.log_size, out.peers]

    def restore(self, saved: dict[str, dict[str, list]], counters: tuple[int, int]) -> None:
        """Back to what ``export`` and ``counters`` gave (on a fresh buffer)."""
        self._stamp, self._tat = counters
        for name, buffer, schedule in (("outgoing", self.unacked, self.resend), ("watched", self.watched, self.watch)):
            for mid, (wire, sent_at, stamp, possible_by, log_fp, resends, due, *rest) in sorted(
                    saved[name].items(), key=lambda kv: kv[1][2]):
                # saved before log_size was: as if the log had moved on past it; before peers was: as many as named
                log_size = rest[0] if rest else -self.config.bloom_capacity
                peers = rest[1] if len(rest) > 1 else len(possible_by)
                buffer[mid] = OwnMessage(wire, sent_at, stamp, set(possible_by), log_fp, resends, log_size, peers)
                if due is not None:
                    schedule.set(mid, due)
