"""A text field whose keys act in the order they were typed."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class Field(Input):
    """An Input that runs its own bindings (Enter, Up, Down, Backspace, the
    arrows...) from its key handler. Left to the bindings machinery, a
    non-priority binding runs once its key has bubbled up to the app - after
    the keys queued behind it in one burst (a slow link, a paste without
    bracketed paste, "Up Up more⏎" typed fast) have already gone into the
    field: "abc⌫d" became "abcd". The keys queued behind one that closed
    the field's screen (the switcher's Enter) go to the widget focused now."""

    async def _on_key(self, event: events.Key) -> None:
        if self.screen not in self.app.screen_stack:  # closed by a key read before this one (not covered)
            event.stop()
            event.prevent_default()
            if self.app.focused is not None:
                self.app.focused.post_message(events.Key(event.key, event.character))
            return
        bound = self._bindings.key_to_bindings.get(event.key, ())
        action = next((b.action for b in bound if not b.priority), None)
        if action is not None and await self.app.run_action(action, self):
            event.stop()
            event.prevent_default()
