"""A replication conversation with one peer over a reliable stream, sans-I/O.

Theory of operation. Both sides start by sending ``Announce`` (their
channels, with a timestamp; a newer announcement replaces an older one, an
older or equal one is ignored). The side that opened the stream initiates:
once it knows what the other side announced, it sends ``SyncRequest`` for
the channels both share. The other side accepts a valid request - every
channel in its announcement, and no session already running for the same
channels - and ignores any other.

Each side of a session first needs its own log heights, which live in the
runtime's store: the connection asks with ``HeightsWanted`` and waits for
``provide_heights``. In log-height mode each side then sends its ``Have``;
in set-reconciliation mode the initiator opens the reconciliation (see
``reconcile``) and the other side answers it (messages that arrive before
its heights are kept until then). Once a side knows what the other lacks -
from the other's ``Have``, or from the finished reconciliation - it asks
for those entries with ``EntriesWanted``, sends what ``provide_entries``
gives it, then ``SyncDone``. A request for a mode we do not start is
answered in log-height mode (as the spec allows), and a ``Have`` answering
our set reconciliation is served the same way.

When both ``SyncDone``s are in, the session ends - or, if both asked for
live mode, stays open: ``push`` streams new entries until a ``SyncDone``
with live mode off.

A log's height is the highest sequence number up to which the log has no
holes, so a peer that lost a message in the middle still gets it back.

The connection follows the ``sync.core`` engine protocol: ``receive(data,
now)``, ``events()``, ``datagrams_to_send(now)`` (stream messages, each
``to`` the peer it was built with), and ``get_timer`` / ``handle_timer``
for its idle timeout: a conversation silent both ways for
``idle_timeout_ms`` closes, unless live mode was asked for or the runtime
has yet to answer a request. Anything malformed or out of protocol closes
the conversation with a one-line reason (``Closed``); nothing from a
closed conversation is reported as received.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping

from sync.core import BROADCAST, Event, LocalProtocolError, Outgoing

from .events import Closed, EntriesWanted, EntryReceived, HeightsWanted, RemoteAnnounced, SessionFinished
from .messages import (
    LOG_HEIGHT,
    SET_RECONCILIATION,
    Announce,
    EntryMessage,
    Have,
    ReplicationError,
    SyncDone,
    SyncRequest,
    decode,
    encode,
    log_id,
)
from .session import RECONCILIATION, Session, Validate

STATE_VERSION = 1
IDLE_TIMEOUT_MS = 60_000

__all__ = ["Connection", "Validate"]


class Connection:
    def __init__(self, channels: Iterable[str], validate: Validate, *, initiator: bool, now: int,
                 live: bool = False, mode: int = SET_RECONCILIATION, peer: Hashable = BROADCAST,
                 idle_timeout_ms: int = IDLE_TIMEOUT_MS) -> None:
        self.mode = mode
        self.validate = validate
        self.initiator = initiator
        self.live = live
        self.peer = peer
        self.idle_timeout_ms = idle_timeout_ms
        self.channels = tuple(sorted(set(channels)))
        self.remote_channels: tuple[str, ...] | None = None
        self._remote_timestamp = -1
        self._sessions: dict[int, Session] = {}
        self._next_session = 0
        self._out: list[bytes] = []
        self._events: list[Event] = []
        self._last_activity = now
        self.closed: str | None = None
        self.stats: Counter[str] = Counter()
        self._send(Announce(now, self.channels))

    # ---------------------------------------------------------------- output

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        """Drain the stream messages to write, in order."""
        out, self._out = self._out, []
        if out:
            self._last_activity = now
        return [Outgoing(data, self.peer) for data in out]

    @property
    def has_output(self) -> bool:
        """Stream messages wait to be written (``datagrams_to_send``)."""
        return bool(self._out)

    def events(self) -> Iterator[Event]:
        events, self._events = self._events, []
        return iter(events)

    def _send(self, msg) -> None:
        if self.closed is None:
            self._out.append(encode(msg))

    def close(self, reason: str) -> None:
        if self.closed is None:
            self.closed = reason
            self._events.append(Closed(reason))

    # ----------------------------------------------------------------- timer

    def get_timer(self) -> int | None:
        waiting_on_us = any(s.waiting_on_runtime for s in self._sessions.values())
        if self.closed is not None or self.live or waiting_on_us:
            return None
        return self._last_activity + self.idle_timeout_ms

    def handle_timer(self, now: int) -> None:
        deadline = self.get_timer()
        if deadline is not None and now >= deadline:
            self.close(f"idle for {self.idle_timeout_ms // 1000} s")

    # ------------------------------------------------------------- commands

    def sync(self, channels: Iterable[str] | None = None) -> int | None:
        """Start a session for ``channels`` (default: every channel both sides
        announced). Only the side that opened the stream initiates."""
        if not self.initiator or self.remote_channels is None or self.closed:
            return None
        wanted = set(self.channels) & set(self.remote_channels)
        if channels is not None:
            wanted &= set(channels)
        chosen = tuple(sorted(wanted))
        if not chosen or self._running(chosen):
            return None
        session = self._open(self._next_session, chosen, self.mode)
        self._next_session += 1
        self._send(SyncRequest(session.session_id, self.mode, chosen))
        return session.session_id

    def provide_heights(self, session_id: int, heights: Mapping[str, Iterable[tuple[str, int]]]) -> None:
        """Answer ``HeightsWanted``: ``{channel: [(author, height), ...]}``
        (a channel left out has no logs)."""
        session = self._waiting(session_id, "wants_heights")
        if session is None:
            return
        session.wants_heights = False
        session.ours = {c: [(author, int(h)) for author, h in heights.get(c, ())] for c in session.channels}
        items = tuple((author, log_id(c), h) for c, logs in session.ours.items() for author, h in logs)
        if session.mode == SET_RECONCILIATION:
            session.start_reconciler(list(items))
            for msg in session.take_queued():
                self._guarded(session.reconciler.receive, msg)
            self._flush_reconciler(session)
        else:
            self._send(Have(session_id, items))
            if session.theirs is not None:
                self._want_entries(session, session.log_height_wants())

    def provide_entries(self, session_id: int, entries: Iterable[bytes], *, done: bool = True) -> None:
        """Answer ``EntriesWanted``: the entries to send, in order; with
        ``done=False`` more follow in another call."""
        session = self._waiting(session_id, "wants_entries")
        if session is None:
            return
        for entry in entries:
            self._send(EntryMessage(session_id, entry))
            session.sent += 1
        if done:
            session.wants_entries = False
            self._sync_done(session)

    def push(self, channel: str, entry: bytes) -> None:
        """A new entry: stream it to every live session for its channel."""
        for s in self._sessions.values():
            if s.live and not s.finished and channel in s.channels:
                self._send(EntryMessage(s.session_id, entry))
                s.sent += 1

    def stop_live(self) -> None:
        for s in self._sessions.values():
            if s.live and not s.finished:
                self._send(SyncDone(s.session_id, False))
                s.live, s.finished = False, True
                self._events.append(SessionFinished(s.session_id, s.channels, s.sent, s.received, live=False))

    # --------------------------------------------------------------- input

    def receive(self, data: bytes, now: int, source: Hashable | None = None) -> None:
        """One whole stream message. Never raises for bad input: it closes."""
        self.stats["received"] += 1
        if self.closed:
            self.stats["after_close"] += 1
            return
        self._last_activity = now
        self._guarded(lambda: self._handle(decode(data)))

    def _guarded(self, step, *args) -> None:
        try:
            step(*args)
        except ReplicationError as exc:
            self.stats["closed_bad_input"] += 1
            self.close(str(exc))

    def _handle(self, msg) -> None:
        if isinstance(msg, Announce):
            if msg.timestamp > self._remote_timestamp:
                self._remote_timestamp = msg.timestamp
                self.remote_channels = msg.schemas
                self._events.append(RemoteAnnounced(msg.schemas))
            return
        if isinstance(msg, SyncRequest):
            self._requested(msg)
            return
        session = self._sessions.get(msg.session_id)
        if session is None:
            raise ReplicationError(f"message for unknown session {msg.session_id}")
        if isinstance(msg, RECONCILIATION):
            if session.mode != SET_RECONCILIATION:
                raise ReplicationError(f"{type(msg).__name__} in a log-height session")
            if session.reconciler is None:
                session.queued.append(msg)  # our heights are not in yet
                return
            session.reconciler.receive(msg)
            self._flush_reconciler(session)
        elif isinstance(msg, Have):
            self._have(session, msg)
        elif isinstance(msg, EntryMessage):
            if session.finished:
                raise ReplicationError(f"entry after session {session.session_id} finished")
            channel = self.validate(session.channels, msg.entry)
            session.received += 1
            self._events.append(EntryReceived(session.session_id, channel, msg.entry))
        elif isinstance(msg, SyncDone):
            self._done(session, msg)
        else:
            raise ReplicationError(f"unexpected {type(msg).__name__}")

    def _requested(self, msg: SyncRequest) -> None:
        if self.initiator:
            raise ReplicationError("SyncRequest from the side that did not open the stream")
        if not msg.schemas or not set(msg.schemas) <= set(self.channels):
            return  # not everything requested is in our announcement: ignored
        if self._running(msg.schemas):
            return  # the same sync is already running: ignored
        if msg.session_id in self._sessions:
            raise ReplicationError(f"session id {msg.session_id} reused")
        if msg.mode not in (LOG_HEIGHT, SET_RECONCILIATION):
            raise ReplicationError(f"unknown sync mode {msg.mode}")
        self._open(msg.session_id, msg.schemas, msg.mode)

    def _have(self, session: Session, msg: Have) -> None:
        if session.theirs is not None or session.sent_done:
            raise ReplicationError(f"second Have in session {session.session_id}")
        ids = {log_id(c): c for c in session.channels}
        session.theirs = {(ids[log], author): seq for author, log, seq in msg.log_heights if log in ids}
        session.mode = LOG_HEIGHT  # a set reconciliation answered with heights continues as log height
        if session.ours is not None:
            self._want_entries(session, session.log_height_wants())

    def _flush_reconciler(self, session: Session) -> None:
        for msg in session.reconciler.messages():
            self._send(msg)
        if session.reconciler.finished and not session.asked_entries:
            # reconciliation told us which of our logs they are behind on
            ids = {log_id(c): c for c in session.channels}
            plan = session.reconciler.plan()
            self._want_entries(session, tuple((ids[log], author, theirs)
                                              for author, log, theirs in plan if log in ids))

    def _want_entries(self, session: Session, wants: tuple[tuple[str, str, int], ...]) -> None:
        session.asked_entries = True
        if wants:
            session.wants_entries = True
            self._events.append(EntriesWanted(session.session_id, wants))
        else:
            self._sync_done(session)

    def _sync_done(self, session: Session) -> None:
        session.sent_done = True
        self._send(SyncDone(session.session_id, session.live_wanted))
        self._maybe_finish(session)

    def _done(self, session: Session, msg: SyncDone) -> None:
        if session.live and not msg.live_mode:
            session.live, session.finished = False, True
            self._events.append(SessionFinished(session.session_id, session.channels, session.sent,
                                                session.received, live=False))
            return
        session.got_done, session.remote_live = True, msg.live_mode
        self._maybe_finish(session)

    def _maybe_finish(self, session: Session) -> None:
        if not (session.sent_done and session.got_done) or session.finished or session.live:
            return
        if session.live_wanted and session.remote_live:
            session.live = True
        else:
            session.finished = True
        self._events.append(SessionFinished(session.session_id, session.channels, session.sent, session.received,
                                            live=session.live))

    # ------------------------------------------------------------ sessions

    def _open(self, session_id: int, channels: tuple[str, ...], mode: int) -> Session:
        session = Session(session_id, channels, initiator=self.initiator, live_wanted=self.live, mode=mode)
        self._sessions[session_id] = session
        session.wants_heights = True
        self._events.append(HeightsWanted(session_id, channels))
        return session

    def _running(self, channels: tuple[str, ...]) -> bool:
        return any(s.channels == channels and not s.finished for s in self._sessions.values())

    def _waiting(self, session_id: int, flag: str) -> Session | None:
        """The session that asked (``flag``), or None if the conversation
        closed meanwhile: a late answer is no error, there is just nobody
        left to send it to."""
        if self.closed is not None:
            return None
        session = self._sessions.get(session_id)
        if session is None or not getattr(session, flag):
            raise LocalProtocolError(f"session {session_id} did not ask for that ({flag})")
        return session

    # ----------------------------------------------------------- persistence

    def export_state(self) -> dict:
        """The whole conversation as plain data (see ``sync.core``). A stream
        does not outlive its process; this is what lets the conformance suite
        hold replication to the same contract as every engine."""
        return {
            "version": STATE_VERSION, "mode": self.mode, "initiator": self.initiator, "live": self.live,
            "idle_timeout_ms": self.idle_timeout_ms, "channels": list(self.channels),
            "remote_channels": None if self.remote_channels is None else list(self.remote_channels),
            "remote_timestamp": self._remote_timestamp,
            "sessions": [s.export() for s in self._sessions.values()],
            "next_session": self._next_session, "out": list(self._out),
            "last_activity": self._last_activity, "closed": self.closed, "stats": dict(self.stats),
        }

    @classmethod
    def restore(cls, state: dict, validate: Validate, peer: Hashable = BROADCAST) -> Connection:
        if state.get("version") != STATE_VERSION:
            raise LocalProtocolError(f"unknown replication state version {state.get('version')!r}")
        conn = cls(state["channels"], validate, initiator=state["initiator"], now=state["last_activity"],
                   live=state["live"], mode=state["mode"], peer=peer, idle_timeout_ms=state["idle_timeout_ms"])
        conn.remote_channels = None if state["remote_channels"] is None else tuple(state["remote_channels"])
        conn._remote_timestamp = state["remote_timestamp"]
        conn._sessions = {s.session_id: s for s in map(Session.restore, state["sessions"])}
        conn._next_session = state["next_session"]
        conn._out = list(state["out"])
        conn.closed = state["closed"]
        conn.stats = Counter(state["stats"])
        return conn
