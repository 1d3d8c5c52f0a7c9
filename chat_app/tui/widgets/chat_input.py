"""The message line: Tab completes commands, channels and nicks; a paste of
several lines asks before it sends anything."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

from chat_app.commands import commands_for, complete

COMMANDS = tuple(c.slash for c in commands_for("tui"))


class ChatInput(Input):
    DEFAULT_CSS = """
    ChatInput {
        dock: bottom;
        border: tall $accent 40%;
    }
    ChatInput:focus { border: tall $accent; }
    """
    BINDINGS = [Binding("tab", "complete", "Complete", show=False, priority=True)]

    class PastedLines(Message):
        def __init__(self, lines: list[str]) -> None:
            super().__init__()
            self.lines = lines

    def __init__(self, candidates: Callable[[], tuple[list[str], list[str]]], **kwargs) -> None:
        super().__init__(placeholder="Message, or /help", **kwargs)
        self._candidates = candidates  # () -> (channels, nicks)
        self._cycle: tuple[str, list[str], int] | None = None

    def action_complete(self) -> None:
        if self._cycle and self.value == self._cycle[1][self._cycle[2]]:
            base, options, index = self._cycle
            index = (index + 1) % len(options)
        else:
            channels, nicks = self._candidates()
            base, options, index = self.value, complete(self.value, COMMANDS, channels, nicks), 0
            if not options:
                self.app.bell()
                return
        self._cycle = (base, options, index)
        self.value = options[index]
        self.cursor_position = len(self.value)

    async def _on_paste(self, event: events.Paste) -> None:
        lines = [line for line in event.text.splitlines() if line.strip()]
        if len(lines) > 1:
            event.stop()
            event.prevent_default()
            self.post_message(self.PastedLines(lines))
            return
        await super()._on_paste(event)
