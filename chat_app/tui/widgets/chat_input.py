"""The message line: Tab completes commands, channels and nicks; a paste of
several lines asks before it sends anything."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

COMMANDS = ("/join", "/part", "/nick", "/me", "/peers", "/export", "/help", "/quit")


def complete(value: str, commands: tuple[str, ...], channels: list[str], nicks: list[str]) -> list[str]:
    """Every completion of ``value``'s last word, as whole new input values."""
    head, _, word = value.rpartition(" ")
    prefix = f"{head} " if head else ""
    if not head and word.startswith("/"):
        return [f"{c} " for c in commands if c.startswith(word)]
    if word.startswith("#") or head == "/join":
        stem = word.lstrip("#").lower()
        return [f"{prefix}#{c} " for c in channels if c.lower().startswith(stem)]
    if not word:
        return []
    suffix = ": " if not head else " "
    return [f"{prefix}{n}{suffix}" for n in nicks if n.lower().startswith(word.lower())]


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
