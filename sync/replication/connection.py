"""A replication conversation with one peer over a reliable stream, sans-I/O.

Theory of operation. Both sides start by sending ``Announce`` (their
channels, with a timestamp; a newer announcement replaces an older one, an
older or equal one is ignored). The side that opened the stream initiates:
once it knows what the other side announced, it sends ``SyncRequest`` for
the channels both share, followed by its ``Have`` (log heights). The other
side answers a valid request - every channel in its announcement, and no
session already running for the same channels - with its own ``Have``.
(This side supports log-height mode; a request for set reconciliation is
answered in log-height mode too, as the spec allows.)

On the other side's ``Have`` each side sends, for every log where it is
ahead, the entries after the other's height, then ``SyncDone``. When both
``SyncDone``s are in, the session ends - or, if both asked for live mode,
stays open: ``push`` streams new entries until a ``SyncDone`` with live mode
off.

A log's height is the highest sequence number up to which the log has no
holes, so a peer that lost a message in the middle still gets it back.

The caller feeds whole messages (``receive``), drains ``messages_to_send``
and ``events``. Anything malformed or out of protocol closes the
conversation with a one-line reason (``Closed``); nothing from a closed
conversation is reported as received.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from .messages import (
    LOG_HEIGHT,
    SET_RECONCILIATION,
    Announce,
    Done,
    EmptyPayload,
    EmptySet,
    Entry,
    Fingerprint,
    Have,
    Item,
    LowerBound,
    Payload,
    ReplicationError,
    SyncDone,
    SyncRequest,
    Terminal,
    decode,
    encode,
    log_id,
)
from .reconcile import Reconciler

RECONCILIATION = (EmptySet, LowerBound, Payload, EmptyPayload, Done, Fingerprint, Terminal)


class LogStore(Protocol):
    """What the app lets replication read: its log heights and entries."""

    def heights(self, channel: str) -> list[tuple[str, int]]:
        """(author, contiguous height) for every author in the channel."""

    def entries_after(self, channel: str, author: str, seq: int) -> Iterable[bytes]:
        """The author's entries in the channel with seq > ``seq``, in order."""


Validate = Callable[[tuple[str, ...], bytes], str]
"""(channels of the session, entry) -> the entry's channel; raises
ReplicationError if the entry is not valid for this session."""


@dataclass(frozen=True)
class EntryReceived:
    session_id: int
    channel: str
    entry: bytes


@dataclass(frozen=True)
class RemoteAnnounced:
    channels: tuple[str, ...]


@dataclass(frozen=True)
class SessionFinished:
    session_id: int
    channels: tuple[str, ...]
    sent: int
    received: int
    live: bool  # True: the session went live; False: it is over


@dataclass(frozen=True)
class Closed:
    reason: str


@dataclass
class _Session:
    session_id: int
    channels: tuple[str, ...]
    initiator: bool
    live_wanted: bool
    sent_done: bool = False
    got_done: bool = False
    remote_live: bool = False
    live: bool = False
    sent: int = 0
    received: int = 0
    finished: bool = False
    reconciler: Reconciler | None = None


class Connection:
    def __init__(self, store: LogStore, channels: Iterable[str], validate: Validate, *, initiator: bool,
                 now: int, live: bool = False, mode: int = SET_RECONCILIATION) -> None:
        self.store = store
        self.mode = mode
        self.validate = validate
        self.initiator = initiator
        self.live = live
        self.channels = tuple(sorted(set(channels)))
        self.remote_channels: tuple[str, ...] | None = None
        self._remote_timestamp = -1
        self._sessions: dict[int, _Session] = {}
        self._next_id = itertools.count()
        self._out: list[bytes] = []
        self._events: list[object] = []
        self.closed: str | None = None
        self._send(Announce(now, self.channels))

    # ---------------------------------------------------------------- output

    def messages_to_send(self) -> list[bytes]:
        out, self._out = self._out, []
        return out

    def events(self) -> list[object]:
        events, self._events = self._events, []
        return events

    def _send(self, msg) -> None:
        if self.closed is None:
            self._out.append(encode(msg))

    def close(self, reason: str) -> None:
        if self.closed is None:
            self.closed = reason
            self._events.append(Closed(reason))

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
        if not chosen or any(s.channels == chosen and not s.finished for s in self._sessions.values()):
            return None
        session = _Session(next(self._next_id), chosen, initiator=True, live_wanted=self.live)
        self._sessions[session.session_id] = session
        self._send(SyncRequest(session.session_id, self.mode, chosen))
        if self.mode == SET_RECONCILIATION:
            session.reconciler = Reconciler(session.session_id, list(self._heights(chosen)))
            session.reconciler.start()
            self._flush_reconciler(session)
        else:
            self._send(Have(session.session_id, self._heights(chosen)))
        return session.session_id

    def push(self, channel: str, entry: bytes) -> None:
        """A new entry: stream it to every live session for its channel."""
        for s in self._sessions.values():
            if s.live and not s.finished and channel in s.channels:
                self._send(Entry(s.session_id, entry))
                s.sent += 1

    def stop_live(self) -> None:
        for s in self._sessions.values():
            if s.live and not s.finished:
                self._send(SyncDone(s.session_id, False))
                s.live, s.finished = False, True
                self._events.append(SessionFinished(s.session_id, s.channels, s.sent, s.received, live=False))

    # --------------------------------------------------------------- input

    def receive(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self._handle(decode(data))
        except ReplicationError as exc:
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
            if session.reconciler is None:
                raise ReplicationError(f"{type(msg).__name__} in a log-height session")
            session.reconciler.receive(msg)
            self._flush_reconciler(session)
        elif isinstance(msg, Have):
            self._have(session, msg)
        elif isinstance(msg, Entry):
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
        if any(s.channels == msg.schemas and not s.finished for s in self._sessions.values()):
            return  # the same sync is already running: ignored
        if msg.session_id in self._sessions:
            raise ReplicationError(f"session id {msg.session_id} reused")
        session = _Session(msg.session_id, msg.schemas, initiator=False, live_wanted=self.live)
        self._sessions[msg.session_id] = session
        if msg.mode == SET_RECONCILIATION:
            session.reconciler = Reconciler(msg.session_id, list(self._heights(msg.schemas)))
        elif msg.mode == LOG_HEIGHT:
            self._send(Have(msg.session_id, self._heights(msg.schemas)))
        else:
            raise ReplicationError(f"unknown sync mode {msg.mode}")

    def _flush_reconciler(self, session: _Session) -> None:
        for msg in session.reconciler.messages():
            self._send(msg)
        if session.reconciler.finished and not session.sent_done:
            # reconciliation told us which of our logs they are behind on
            ids = {log_id(c): c for c in session.channels}
            for author, log, theirs in session.reconciler.plan():
                if log in ids:
                    self._send_entries(session, ids[log], author, theirs)
            self._sync_done(session)

    def _have(self, session: _Session, msg: Have) -> None:
        if session.sent_done:
            raise ReplicationError(f"second Have in session {session.session_id}")
        ids = {log_id(c): c for c in session.channels}
        theirs: dict[tuple[str, str], int] = {}
        for author, log, seq in msg.log_heights:
            if log in ids:
                theirs[(ids[log], author)] = seq
        for channel in session.channels:
            for author, _height in self.store.heights(channel):
                self._send_entries(session, channel, author, theirs.get((channel, author), 0))
        self._sync_done(session)

    def _send_entries(self, session: _Session, channel: str, author: str, above: int) -> None:
        """Everything we hold above their height - including what lies beyond
        a hole in our own log."""
        for entry in self.store.entries_after(channel, author, above):
            self._send(Entry(session.session_id, entry))
            session.sent += 1

    def _sync_done(self, session: _Session) -> None:
        session.sent_done = True
        self._send(SyncDone(session.session_id, session.live_wanted))
        self._maybe_finish(session)

    def _done(self, session: _Session, msg: SyncDone) -> None:
        if session.live and not msg.live_mode:
            session.live, session.finished = False, True
            self._events.append(SessionFinished(session.session_id, session.channels, session.sent,
                                                session.received, live=False))
            return
        session.got_done, session.remote_live = True, msg.live_mode
        self._maybe_finish(session)

    def _maybe_finish(self, session: _Session) -> None:
        if not (session.sent_done and session.got_done) or session.finished or session.live:
            return
        if session.live_wanted and session.remote_live:
            session.live = True
        else:
            session.finished = True
        self._events.append(SessionFinished(session.session_id, session.channels, session.sent, session.received,
                                            live=session.live))

    def _heights(self, channels: Iterable[str]) -> tuple[Item, ...]:
        return tuple((author, log_id(c), seq) for c in channels for author, seq in self.store.heights(c))
