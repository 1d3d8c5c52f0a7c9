"""One line under the history: who is typing in this channel."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static

from chat_app.tui.model import typing_line
from chat_app.tui.state import ClientState


class TypingLine(Static):
    DEFAULT_CSS = """
    TypingLine {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def show_state(self, state: ClientState) -> None:
        self.show(state.typing_here(int(time.time() * 1000)))

    def show(self, nicks: list[str]) -> None:
        self.update(Text(typing_line(nicks)))  # Text, not markup: the nicks are the peers' own
