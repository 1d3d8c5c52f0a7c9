"""One node's MVDS: a session per peer, on the ``sync.core`` engine protocol.

Theory of operation
-------------------

Time is cut into epochs of ``Config.epoch_ms``, numbered from the epoch of
Unix time (``now // epoch_ms``), so epoch numbers survive a restart: a record
due in an epoch that passed while the node was down is simply due at once.

``send(peer, group_id, body, now)`` stamps the message ``max(now, last + 1)``
in its conversation, computes its id as the reference implementation does,
and adds a record to the peer's session: a MESSAGE (batch mode) or an OFFER
(interactive mode, the default for bodies of ``interactive_from_bytes`` or
more and for a peer not heard from lately - while it is away only the
offer's 32 bytes are retransmitted). The record is due at the next epoch
(to a peer away, with the conversation's next retransmission).
``handle_timer`` builds each session's payload when its epoch comes - at
most one per peer per epoch,
holding the acks owed and every due record - and each record sent waits
``Config.backoff(send_count)`` epochs before it is due again: doubling up to
a cap, then dropping back to a floor. Acks remove records; requests turn
offers into messages; offers become requests; messages are delivered and
acked (see ``session`` for the order rule that makes delivery in order need
no buffer).

A peer that was away is retransmitted to slowly; when it comes back -
the runtime calls ``peer_seen`` (discovery found it again, or its
keep-alive arrived), or a payload
arrives from it after ``comeback_after_ms`` of silence - its records' backoff
resets and they go out in the next payload, at once if none went out in this
epoch.

A peer away may return when we are gone. ``letter`` is what a mailbox (a
store peer) should hold for it meanwhile - every message it has not
acknowledged, in batch mode, so that whoever is online when it returns can
hand them over - and ``receive(letter=True)`` takes one (see ``letters``).

The node is a deterministic function of its inputs and its exported state;
``export_state`` after each step and ``restore`` after a crash resume every
retransmission where it stood.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from sync.core import Outgoing, Schedule
from sync.core.protocol import Peer

from . import letters
from .config import Config, Mode
from .errors import LocalProtocolError, RemoteProtocolError
from .events import Event, Rejected
from .records import MESSAGE, OFFER, REQUEST
from .session import Session
from .unacked import OwnMessage
from .wire import decode, message_id

STATE_VERSION = 1


class MvdsNode:
    """MVDS for one node: direct, reliable messages to any number of peers."""

    def __init__(self, now: int, config: Config | None = None, *, saved: dict | None = None) -> None:
        """``saved``: what ``restore`` resumes from."""
        self.config = config or Config()
        self._sessions: dict[Peer, Session] = {}
        self._by_key: dict[int, Session] = {}
        self._timers: Schedule[int] = Schedule()  # session key -> when its next payload is due (ms)
        self._last_stamp: dict[bytes, int] = {}  # group -> our latest timestamp in it
        self._events: list[Event] = []
        self._outbox: list[Outgoing] = []
        self.stats: Counter[str] = Counter()
        if saved is not None:
            self._resume(saved)

    # ------------------------------------------------------------ commands

    def send(self, peer: Peer, group_id: bytes, body: bytes, now: int, mode: Mode | None = None) -> bytes:
        """Queue ``body`` for ``peer`` in conversation ``group_id``; returns
        the message id. ``mode`` defaults to interactive for a large body
        (``Config.interactive_from_bytes``) or a peer not heard from lately
        (``comeback_after_ms``), batch otherwise."""
        config = self.config
        if peer is None:
            raise LocalProtocolError("a direct message needs a peer")
        if not isinstance(body, bytes) or not body:
            raise LocalProtocolError("a message body is non-empty bytes")
        if len(body) > config.max_body_bytes:
            raise LocalProtocolError(f"a body of {len(body)} bytes exceeds {config.max_body_bytes}")
        if not isinstance(group_id, bytes) or not 0 < len(group_id) <= config.max_group_id_bytes:
            raise LocalProtocolError(f"a group id is 1 to {config.max_group_id_bytes} bytes")
        session = self._session(peer)
        if session is None or len(session.records) >= config.max_records_per_peer:
            raise LocalProtocolError("too many messages wait for this peer")
        if mode is None:  # batch is fastest to a peer that is there; offers are cheapest to one away
            interactive = len(body) >= config.interactive_from_bytes or session.silent(now)
            mode = Mode.INTERACTIVE if interactive else Mode.BATCH
        stamp = max(now, self._last_stamp.get(group_id, -1) + 1)
        self._last_stamp[group_id] = stamp
        mid = message_id(group_id, stamp, body)
        session.add_own(mid, OwnMessage(group_id, stamp, body), Mode(mode) is Mode.INTERACTIVE, self._epoch(now), now)
        self.stats[f"sent_{Mode(mode).value}"] += 1
        self._reschedule(session)
        return mid

    def peer_seen(self, peer: Peer, now: int) -> None:
        """The runtime found ``peer`` again (discovery, or any sign of life):
        whatever waits for it goes out at once."""
        session = self._session(peer)
        if session is not None:
            session.last_heard = now
            session.reset_backoff(self._epoch(now))
            self._reschedule(session)

    def forget(self, peer: Peer) -> list[tuple[bytes, OwnMessage]]:
        """Drop everything kept for ``peer`` (the user closed the
        conversation for good, or the peer is known to be gone): no more
        retransmissions to it. Returns our messages it never acknowledged,
        oldest first per conversation, so the runtime can say which were
        not delivered. A later payload from the peer starts afresh."""
        session = self._sessions.pop(peer, None)
        if session is None:
            return []
        del self._by_key[session.key]
        self._timers.discard(session.key)
        self.stats["forgotten"] += 1
        return [(mid, session.own[mid]) for group in session.own.groups() for mid in session.own.conversation(group)]

    # --------------------------------------------------------------- input

    def receive(self, data: bytes, now: int, source: Peer | None = None, letter: bool = False) -> None:
        """One payload from ``source``; ``letter``: one it left with a mailbox
        (``letters``) - its messages and acks count, but it is no sign that
        ``source`` is there. Never raises for bad input."""
        self.stats["received"] += 1
        try:
            if source is None:
                raise RemoteProtocolError("unknown_source", "a payload from an unknown peer")
            payload = decode(data, self.config)
            session = self._session(source)
            if session is None:
                raise RemoteProtocolError("peers_full", f"more than {self.config.max_peers} peers")
        except RemoteProtocolError as exc:
            self.stats[exc.kind] += 1
            self._events.append(Rejected(exc.kind, str(exc)))
            return
        session.on_payload(payload, self._epoch(now), now, self._events, live=not letter)
        self._reschedule(session)

    def handle_timer(self, now: int) -> None:
        epoch = self._epoch(now)
        for key in self._timers.pop_due(now):
            session = self._by_key[key]
            data = session.compose(epoch, now)
            if data is not None:
                self._outbox.append(Outgoing(data, to=session.peer))
            self._reschedule(session)

    # ------------------------------------------------------------- letters

    def letter(self, peer: Peer) -> bytes | None:
        """The payload a mailbox should hold for ``peer`` while it is away:
        our messages it has not acknowledged, in batch mode whatever the
        live session runs, and acks of its own letters (``letters``). None:
        nothing to carry."""
        session = self._sessions.get(peer)
        return None if session is None else letters.compose(session)

    def letter_due(self, peer: Peer, now: int) -> bool:
        """Whether ``peer`` probably will not get what we send it live, so a
        letter should go to the mailboxes along with it."""
        session = self._sessions.get(peer)
        return session is not None and letters.due(session, now)

    # -------------------------------------------------------------- output

    def events(self) -> Iterator[Event]:
        events, self._events = self._events, []
        return iter(events)

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        out, self._outbox = self._outbox, []
        return out

    def get_timer(self) -> int | None:
        return self._timers.next_due()

    # --------------------------------------------------------- inspection

    def records(self, peer: Peer) -> list[tuple[str, bytes, int, int]]:
        """The peer's state records: (type, message id, send count, send epoch)."""
        session = self._sessions.get(peer)
        if session is None:
            return []
        return [(kind, mid, r.send_count, r.send_epoch) for (kind, mid), r in session.records.items()]

    def last_timestamp(self, group_id: bytes) -> int | None:
        """The timestamp of our latest message in ``group_id`` (the one ``send`` just stamped)."""
        return self._last_stamp.get(group_id)

    def waiting(self, peer: Peer) -> int:
        """Our messages to ``peer`` not acknowledged yet."""
        session = self._sessions.get(peer)
        return 0 if session is None else len(session.own)

    # ----------------------------------------------------------- internals

    def _epoch(self, now: int) -> int:
        return now // self.config.epoch_ms

    def _session(self, peer: Peer) -> Session | None:
        session = self._sessions.get(peer)
        if session is None:
            if len(self._sessions) >= self.config.max_peers:
                return None
            key = max(self._by_key, default=-1) + 1
            session = self._sessions[peer] = self._by_key[key] = Session(peer, key, self.config, self.stats)
        return session

    def _reschedule(self, session: Session) -> None:
        epoch = session.next_epoch()
        if epoch is None:
            self._timers.discard(session.key)
        else:
            self._timers.set(session.key, epoch * self.config.epoch_ms)

    # --------------------------------------------------------------- state

    def export_state(self) -> dict:
        """Everything needed to resume, as plain data (peers must be plain
        data too: str, bytes, int, or tuples of them)."""
        return {
            "version": STATE_VERSION,
            "last_stamp": [[group, stamp] for group, stamp in self._last_stamp.items()],
            "sessions": [session.export() for session in self._sessions.values()],
            "stats": dict(self.stats),
        }

    @classmethod
    def restore(cls, state: dict, config: Config | None = None) -> MvdsNode:
        if state.get("version") != STATE_VERSION:
            raise LocalProtocolError(f"unknown MVDS state version {state.get('version')!r}")
        return cls(0, config, saved=state)

    def _resume(self, state: dict) -> None:
        self.stats.update(state["stats"])  # before the sessions, which count into it
        self._last_stamp = {group: stamp for group, stamp in state["last_stamp"]}
        for saved in state["sessions"]:
            peer = _thaw(saved["peer"])
            session = Session.restore(saved, peer, self.config, self.stats)
            self._sessions[peer] = self._by_key[session.key] = session
            self._reschedule(session)


def _thaw(value):
    """A peer back from plain data: lists (what tuples become) to tuples."""
    return tuple(_thaw(v) for v in value) if isinstance(value, list) else value


__all__ = ["MESSAGE", "OFFER", "REQUEST", "MvdsNode"]
