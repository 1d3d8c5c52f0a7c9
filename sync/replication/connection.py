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

Every entry is checked twice before it is reported: by the runtime, which
is asked (``EntryArrived``) and answers with ``entry_checked`` - what the
entry is (its channel, author and sequence number: an ``EntryKey``, and
the value its check made, handed back with ``EntryReceived``), or why it
is refused - and by its session, which holds it to what the other side said (spec 2.2, "is the data related to what was
requested"): until live mode an entry must be of a log the other side named
- in its ``Have``, or in the items of the reconciliation - above the height
we hold, and come before its ``SyncDone``. A refused entry is reported
(``EntryDropped``, with why) and never as received; a fatal refusal closes
the conversation.

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

from .events import Closed, HeightsWanted, RemoteAnnounced
from .messages import (
    LOG_HEIGHT,
    SET_RECONCILIATION,
    Announce,
    EntryMessage,
    Have,
    Message,
    ReplicationError,
    SyncDone,
    SyncRequest,
    encode,
    read_message,
)
from .session import RECONCILIATION, EntryKey, Output, Session, Verdict

STATE_VERSION = 1
IDLE_TIMEOUT_MS = 60_000

__all__ = ["Connection", "EntryKey", "Verdict"]


class Connection:
    def __init__(self, channels: Iterable[str], *, initiator: bool, now: int,
                 live: bool = False, mode: int = SET_RECONCILIATION, peer: Hashable = BROADCAST,
                 idle_timeout_ms: int = IDLE_TIMEOUT_MS, saved: dict | None = None) -> None:
        """``saved``: what ``restore`` resumes from (nothing is announced again)."""
        self.mode = mode
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
        # what sessions answer with (``events()`` swaps the list: no bound ``append``)
        self._output = Output(self._send, lambda event: self._events.append(event), self._guarded)
        if saved is None:
            self._send(Announce(now, self.channels))
        else:
            self._resume(saved)

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
        if (session := self._waiting(session_id, "wants_heights")) is not None:
            session.heights(heights, self._output)

    def provide_entries(self, session_id: int, entries: Iterable[bytes], *, done: bool = True) -> None:
        """Answer ``EntriesWanted``: the entries to send, in order; with
        ``done=False`` more follow in another call."""
        if (session := self._waiting(session_id, "wants_entries")) is not None:
            session.send_entries(entries, done, self._output)

    def entry_checked(self, session_id: int, entry: bytes, verdict: Verdict, checked: object = None) -> None:
        """Answer ``EntryArrived``: what ``entry`` is (an ``EntryKey``, with
        ``checked``, the value the check made of it), or why it is refused."""
        if (session := self._waiting(session_id, "unchecked")) is not None:
            self._guarded(session.checked, entry, verdict, checked, self._output)

    def push(self, channel: str, entry: bytes) -> None:
        """A new entry: stream it to every live session for its channel."""
        for session in self._sessions.values():
            session.push(channel, entry, self._output)

    def stop_live(self) -> None:
        for session in self._sessions.values():
            session.stop_live(self._output)

    # --------------------------------------------------------------- input

    def receive(self, data: bytes, now: int, source: Hashable | None = None) -> None:
        """One whole stream message. Never raises for bad input: it closes."""
        self.take(read_message(data), now)

    def take(self, msg: Message | ReplicationError, now: int) -> None:
        """One stream message, decoded already (``read_message``: the runtime
        reads a frame's entry before the connection sees it), or why it could
        not be: that closes. Never raises for bad input."""
        self.stats["received"] += 1
        if self.closed:
            self.stats["after_close"] += 1
            return
        if any(s.unchecked for s in self._sessions.values()):
            raise LocalProtocolError("an entry is not checked yet: answer EntryArrived before the next frame")
        self._last_activity = now
        self._guarded(self._handle, msg)

    def takes_entries(self, session_id: int) -> bool:
        """Whether an entry for ``session_id`` would be looked at now: the
        session is open and not finished (any other closes the connection
        unchecked, so nothing need be spent checking it)."""
        session = self._sessions.get(session_id)
        return self.closed is None and session is not None and not session.finished

    def _guarded(self, step, *args) -> None:
        try:
            step(*args)
        except ReplicationError as exc:
            self.stats["closed_bad_input"] += 1
            self.close(str(exc))

    def _handle(self, msg: Message | ReplicationError) -> None:
        if isinstance(msg, ReplicationError):
            raise msg
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
            session.reconciliation(msg, self._output)
        elif isinstance(msg, Have):
            session.have(msg, self._output)
        elif isinstance(msg, EntryMessage):
            session.entry(msg, self._output)
        elif isinstance(msg, SyncDone):
            session.done(msg, self._output)
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
    def restore(cls, state: dict, peer: Hashable = BROADCAST) -> Connection:
        if state.get("version") != STATE_VERSION:
            raise LocalProtocolError(f"unknown replication state version {state.get('version')!r}")
        return cls(state["channels"], initiator=state["initiator"], now=state["last_activity"],
                   live=state["live"], mode=state["mode"], peer=peer, idle_timeout_ms=state["idle_timeout_ms"],
                   saved=state)

    def _resume(self, state: dict) -> None:
        self.remote_channels = None if state["remote_channels"] is None else tuple(state["remote_channels"])
        self._remote_timestamp = state["remote_timestamp"]
        self._sessions = {s.session_id: s for s in map(Session.restore, state["sessions"])}
        self._next_session = state["next_session"]
        self._out = list(state["out"])
        self.closed = state["closed"]
        self.stats.update(state["stats"])
