"""One line above the history: the channel's topic and who set it, as in
WeeChat's title bar. Hidden while the channel has no topic."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class TopicLine(Static):
    DEFAULT_CSS = """
    TopicLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    """

    def show(self, channel: str, topic: tuple[str, str | None] | None) -> None:
        """``topic``: (text, nick of who set it), or None."""
        self.display = topic is not None
        if topic is None:
            self.update("")
            return
        text, nick = topic
        line = Text.assemble((f"#{channel}", "bold"), ": ", " ".join(text.split()))
        if nick:
            line.append(f"  (set by {nick})", style="dim")
        self.update(line)
