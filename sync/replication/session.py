"""One sync session inside a replication ``Connection``: where it stands.

A session waits on two things the runtime supplies (our heights, then the
entries to send) and on two the other side does (its heights or the
reconciliation, then its ``SyncDone``); these fields record which have come.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from .messages import Done, EmptyPayload, EmptySet, Fingerprint, ItemPayload, LowerBound, Terminal
from .reconcile import Reconciler
from .state import export_object, from_plain, restore_object, to_plain

RECONCILIATION = (EmptySet, LowerBound, ItemPayload, EmptyPayload, Done, Fingerprint, Terminal)

Validate = Callable[[tuple[str, ...], bytes], str]
"""(channels of the session, entry) -> the entry's channel; raises
ReplicationError if the entry is not valid for this session."""


@dataclass
class Session:
    session_id: int
    channels: tuple[str, ...]
    initiator: bool
    live_wanted: bool
    mode: int
    ours: dict[str, list[tuple[str, int]]] | None = None  # channel -> [(author, height)], once provided
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

    @property
    def waiting_on_runtime(self) -> bool:
        return self.wants_heights or self.wants_entries

    def start_reconciler(self, items: list) -> None:
        self.reconciler = Reconciler(self.session_id, items)
        if self.initiator:
            self.reconciler.start()

    def take_queued(self) -> list:
        queued, self.queued = self.queued, []
        return queued

    def log_height_wants(self) -> tuple[tuple[str, str, int], ...]:
        """Every log of ours, above the other side's height (0 if it has none):
        what lies beyond a hole in our own log is sent too."""
        theirs = self.theirs or {}
        return tuple((channel, author, theirs.get((channel, author), 0))
                     for channel in self.channels for author, _height in self.ours.get(channel, ()))

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
