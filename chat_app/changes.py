"""Events about what messages have become, said as the log grows.

``Changes`` stands between the runtime and a user interface: it passes every
event on, and after a delivered reaction, edit or deletion it says what the
message it names has become (``MessageChanged``) - or, when it changes
nothing, why (``AboutRejected``, counted as ``about_rejected``). A message
that arrives after some about it (they came first, by another path) is
followed by what they make of it, so the result never depends on the order
of arrival. Each look-up reads one message and the ones about it through the
store's index, never the history; a message that arrives is looked up only
if something about it came first (``_awaited``, read from the store at start:
most messages have nothing about them yet, and a query for each was work on
every delivery).
"""

from __future__ import annotations

from collections import Counter

from chat_app import events as ev
from chat_app.annotations import CHANGING_KINDS, SHOWN_KINDS, derive, refusal
from chat_app.bounded import Latest
from chat_app.events import Emit
from chat_app.store import Store


AWAITED_KEPT = 4096
"""Messages named before they arrived, remembered (anyone may name made-up ids)."""


class Changes:
    def __init__(self, store: Store, emit: Emit, stats: Counter[str]) -> None:
        self.store = store
        self._emit = emit
        self._stats = stats
        self._awaited: Latest[tuple[str, str], None] = Latest(AWAITED_KEPT)
        for awaited in store.awaited(AWAITED_KEPT):
            self._awaited.put(awaited, None)

    def __call__(self, event: ev.AppEvent) -> None:
        self._emit(event)
        if isinstance(event, ev.MessageDelivered | ev.DmDelivered) and event.kind is not None:
            if event.kind in CHANGING_KINDS:
                self._changed(event.channel, event.about, event.message_id)
            elif event.kind in SHOWN_KINDS and (event.channel, event.message_id) in self._awaited:
                del self._awaited[event.channel, event.message_id]
                self._changed(event.channel, event.message_id, None)

    def _changed(self, channel: str, message_id: str, by: str | None) -> None:
        """Say what ``message_id`` has become after the message ``by`` (None:
        it arrived itself), or, when ``by`` changes nothing, why not."""
        about = self.store.about(channel, [message_id])
        if by is None and not any(m.kind in CHANGING_KINDS for m in about):
            return
        target = self.store.message(channel, message_id)
        note = next((m for m in about if m.message_id == by), None)
        if note is not None and (reason := refusal(target, note)) is not None:
            self._stats["about_rejected"] += 1
            if target is None:  # it may come later, by another path
                self._await(channel, message_id)
            return self._emit(ev.AboutRejected(channel, by, message_id, reason))
        if target is None:
            return
        derived, _ = derive(target, about)
        self._emit(ev.MessageChanged(channel, message_id, derived.text, derived.edited, derived.deleted,
                                     derived.reactions))

    def _await(self, channel: str, message_id: str) -> None:
        self._awaited.put((channel, message_id), None)
