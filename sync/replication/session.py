"""One sync session inside a replication ``Connection``: where it stands,
and what it does with each message.

A session waits on two things the runtime supplies (our heights, then the
entries to send) and on two the other side does (its heights or the
reconciliation, then its ``SyncDone``); its fields record which have come.
The connection routes each message to its session, as aioquic's connection
hands frames to its streams; the session answers through ``Output`` - the
connection's stream and event list - and raises ``ReplicationError`` for
anything out of protocol, which closes the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields

from sync.core import Event

from .events import EntriesWanted, EntryArrived, EntryDropped, EntryReceived, SessionFinished
from .messages import (
    LOG_HEIGHT,
    SET_RECONCILIATION,
    Done,
    EmptyPayload,
    EmptySet,
    EntryMessage,
    EntryRefused,
    Fingerprint,
    Have,
    ItemPayload,
    LowerBound,
    ReplicationError,
    SyncDone,
    Terminal,
    log_id,
)
from .reconcile import Reconciler
from .state import export_object, from_plain, restore_object, to_plain

RECONCILIATION = (EmptySet, LowerBound, ItemPayload, EmptyPayload, Done, Fingerprint, Terminal)


@dataclass(frozen=True, slots=True)
class EntryKey:
    """What an entry is, by its log: its channel (one of the session's), its
    author (the items' ``public_key``) and its sequence number - read from
    inside the entry by the entry check, so the session can hold the entry
    to what the other side said it would send."""

    channel: str
    author: str
    seq: int


Verdict = EntryKey | ReplicationError
"""The runtime's answer to ``EntryArrived``: what the entry is, or why it is
refused. An ``EntryRefused`` that is not fatal drops the entry and the
session goes on; any other refusal closes the connection."""


@dataclass(frozen=True, slots=True)
class Output:
    """Where a session's messages and events go: its connection's stream and
    event list, and the guard that closes the connection on bad input."""

    send: Callable[[object], None]
    report: Callable[[Event], None]
    guarded: Callable[..., None]


@dataclass
class Session:
    session_id: int
    channels: tuple[str, ...]
    initiator: bool
    live_wanted: bool
    mode: int
    ours: dict[tuple[str, str], int] | None = None  # (channel, author) -> our height, once provided
    theirs: dict[tuple[str, str], int] | None = None  # (channel, author) -> height, from their Have
    queued: list = field(default_factory=list)  # reconciliation messages that came before our heights
    reconciler: Reconciler | None = None
    wants_heights: bool = False
    wants_entries: bool = False
    asked_entries: bool = False
    sent_done: bool = False
    got_done: bool = False
    remote_live: bool = False
    live: bool = False
    sent: int = 0
    received: int = 0
    finished: bool = False
    unchecked: int = 0  # entries the runtime has yet to say what they are (``EntryArrived``)

    @property
    def waiting_on_runtime(self) -> bool:
        return self.wants_heights or self.wants_entries or bool(self.unchecked)

    def start_reconciler(self, items: list) -> None:
        self.reconciler = Reconciler(self.session_id, items)
        if self.initiator:
            self.reconciler.start()

    def take_queued(self) -> list:
        queued, self.queued = self.queued, []
        return queued

    # ------------------------------------------------ what the runtime supplies

    def heights(self, heights: Mapping[str, Iterable[tuple[str, int]]], out: Output) -> None:
        """Our log heights are in: open the reconciliation (then take what
        came before them), or send our ``Have``."""
        self.wants_heights = False
        self.ours = {(c, author): int(h) for c in self.channels for author, h in heights.get(c, ())}
        items = tuple((author, log_id(c), h) for (c, author), h in self.ours.items())
        if self.mode == SET_RECONCILIATION:
            self.start_reconciler(list(items))
            for msg in self.take_queued():
                out.guarded(self.reconciler.receive, msg)
            self.flush_reconciler(out)
        else:
            out.send(Have(self.session_id, items))
            if self.theirs is not None:
                self.want_entries(self.log_height_wants(), out)

    def send_entries(self, entries: Iterable[bytes], done: bool, out: Output) -> None:
        for entry in entries:
            out.send(EntryMessage(self.session_id, entry))
            self.sent += 1
        if done:
            self.wants_entries = False
            self.send_done(out)

    def push(self, channel: str, entry: bytes, out: Output) -> None:
        """A new entry, streamed if this session is live for its channel."""
        if self.live and not self.finished and channel in self.channels:
            out.send(EntryMessage(self.session_id, entry))
            self.sent += 1

    def stop_live(self, out: Output) -> None:
        if self.live and not self.finished:
            out.send(SyncDone(self.session_id, False))
            self.live, self.finished = False, True
            out.report(SessionFinished(self.session_id, self.channels, self.sent, self.received, live=False))

    # ------------------------------------------------- what the other side sends

    def reconciliation(self, msg, out: Output) -> None:
        if self.mode != SET_RECONCILIATION:
            raise ReplicationError(f"{type(msg).__name__} in a log-height session")
        if self.reconciler is None:
            self.queued.append(msg)  # our heights are not in yet
            return
        self.reconciler.receive(msg)
        self.flush_reconciler(out)

    def have(self, msg: Have, out: Output) -> None:
        if self.theirs is not None or self.sent_done:
            raise ReplicationError(f"second Have in session {self.session_id}")
        ids = {log_id(c): c for c in self.channels}
        self.theirs = {(ids[log], author): seq for author, log, seq in msg.log_heights if log in ids}
        self.mode = LOG_HEIGHT  # a set reconciliation answered with heights continues as log height
        if self.ours is not None:
            self.want_entries(self.log_height_wants(), out)

    def entry(self, msg: EntryMessage, out: Output) -> None:
        if self.finished:
            raise ReplicationError(f"entry after session {self.session_id} finished")
        self.unchecked += 1
        out.report(EntryArrived(self.session_id, self.channels, msg.entry))

    def checked(self, entry: bytes, verdict: Verdict, checked: object, out: Output) -> None:
        """The runtime said what ``entry`` is: held to what the other side said, then reported."""
        self.unchecked -= 1
        try:
            if isinstance(verdict, ReplicationError):
                raise verdict
            if not self.live:
                self.expected(verdict)
        except EntryRefused as exc:
            out.report(EntryDropped(self.session_id, exc.kind, exc.detail))
            if exc.fatal:
                raise
            return
        self.received += 1
        out.report(EntryReceived(self.session_id, verdict.channel, entry, checked))

    def expected(self, key: EntryKey) -> None:
        """Until live mode, a peer sends what it found we lack, and nothing
        else: entries of the logs it named (in its ``Have``, or in the
        reconciliation's items; any log, if we hold none), above the height we
        told it we hold, before its ``SyncDone``. Any other entry lies about
        its log or its height."""
        if self.got_done:
            raise EntryRefused("after_done", f"an entry after the peer's SyncDone in session {self.session_id}")
        log = (key.channel, key.author)
        if self.theirs is not None:
            named = log in self.theirs
        elif self.reconciler is not None:  # holding nothing, we asked for everything: any log is what we asked
            named = not self.reconciler.mine or (key.author, log_id(key.channel)) in self.reconciler.named
        else:
            named = False
        if not named:
            raise EntryRefused("unnamed", f"an entry of {key.author[:64]} in {key.channel[:40]}, "
                                          "a log the peer did not name")
        if key.seq <= (ours := (self.ours or {}).get(log, 0)):
            raise EntryRefused("height", f"entry {key.seq} of {key.author[:64]} in {key.channel[:40]}: "
                                         f"we hold up to {ours}, and said so")

    def done(self, msg: SyncDone, out: Output) -> None:
        if self.live and not msg.live_mode:
            self.live, self.finished = False, True
            out.report(SessionFinished(self.session_id, self.channels, self.sent, self.received, live=False))
            return
        self.got_done, self.remote_live = True, msg.live_mode
        self._maybe_finish(out)

    # ------------------------------------------------------------------ steps

    def flush_reconciler(self, out: Output) -> None:
        for msg in self.reconciler.messages():
            out.send(msg)
        if self.reconciler.finished and not self.asked_entries:
            # reconciliation told us which of our logs they are behind on
            ids = {log_id(c): c for c in self.channels}
            plan = self.reconciler.plan()
            self.want_entries(tuple((ids[log], author, theirs) for author, log, theirs in plan if log in ids), out)

    def want_entries(self, wants: tuple[tuple[str, str, int], ...], out: Output) -> None:
        self.asked_entries = True
        if wants:
            self.wants_entries = True
            out.report(EntriesWanted(self.session_id, wants))
        else:
            self.send_done(out)

    def send_done(self, out: Output) -> None:
        self.sent_done = True
        out.send(SyncDone(self.session_id, self.live_wanted))
        self._maybe_finish(out)

    def _maybe_finish(self, out: Output) -> None:
        if not (self.sent_done and self.got_done) or self.finished or self.live:
            return
        if self.live_wanted and self.remote_live:
            self.live = True
        else:
            self.finished = True
        out.report(SessionFinished(self.session_id, self.channels, self.sent, self.received, live=self.live))

    def log_height_wants(self) -> tuple[tuple[str, str, int], ...]:
        """Every log of ours, above the other side's height (0 if it has none):
        what lies beyond a hole in our own log is sent too."""
        theirs = self.theirs or {}
        return tuple((channel, author, theirs.get((channel, author), 0)) for channel, author in self.ours)

    def export(self) -> dict:
        state = {f.name: to_plain(getattr(self, f.name)) for f in fields(self) if f.name != "reconciler"}
        state["reconciler"] = None if self.reconciler is None else export_object(self.reconciler)
        return state

    @classmethod
    def restore(cls, state: dict) -> Session:
        values = {name: from_plain(value) for name, value in state.items() if name != "reconciler"}
        session = cls(**values)
        if state["reconciler"] is not None:
            session.reconciler = restore_object(Reconciler, state["reconciler"])
        return session
