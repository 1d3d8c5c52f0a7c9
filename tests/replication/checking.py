"""What the runtime does with ``EntryArrived``, for tests that drive
connections by hand: answer it at once with a check of the test's choosing
(``CatchUp.check`` in the runtime)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sync.core import Event
from sync.replication import Connection, EntryArrived, EntryKey, ReplicationError

Check = Callable[[tuple[str, ...], bytes], EntryKey]
"""(channels of the session, entry) -> what it is; raises ``ReplicationError``
(``EntryRefused``) to refuse it."""


class Checking:
    """``conn``, with every ``EntryArrived`` answered by ``check`` as soon as
    it is reported; every other event is passed on in order."""

    def __init__(self, conn: Connection, check: Check) -> None:
        self.conn, self.check = conn, check
        self._held: list[Event] = []

    def __getattr__(self, name: str):
        return getattr(self.conn, name)

    def receive(self, data: bytes, now: int, source=None) -> None:
        self.conn.receive(data, now, source)
        self._answer()

    def events(self) -> Iterator[Event]:
        self._answer()
        events, self._held = self._held, []
        return iter(events)

    def _answer(self) -> None:
        while arrived := list(self.conn.events()):
            for event in arrived:
                if not isinstance(event, EntryArrived):
                    self._held.append(event)
                    continue
                try:
                    verdict = self.check(event.channels, event.entry)
                except ReplicationError as refusal:
                    verdict = refusal
                self.conn.entry_checked(event.session_id, event.entry, verdict)


def checking(channels, check: Check, **kwargs) -> Checking:
    """A new ``Connection`` for ``channels`` whose entries ``check`` answers."""
    return Checking(Connection(channels, **kwargs), check)
