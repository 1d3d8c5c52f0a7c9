"""One line above the history: the channel's topic and who set it, as in
WeeChat's title bar. Hidden while the channel has no topic. The topic and
the nick are the peers' words: shown inert (``chat_app.inert_text``), and
the topic's newlines and tabs as single spaces."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from chat_app.inert_text import inert
from chat_app.tui.state import ClientState


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

    def show_state(self, state: ClientState) -> None:
        if (model := state.current_model) is not None:
            self.show(model.name, model.topic)

    def show(self, channel: str, topic: tuple[str, str | None] | None) -> None:
        """``topic``: (text, nick of who set it), or None."""
        self.display = topic is not None
        if topic is None:
            self.update("")
            return
        text, nick = topic
        line = Text.assemble((f"#{channel}", "bold"), ": ", " ".join(inert(text, lines=True).split()))
        if nick:
            line.append(f"  (set by {inert(nick)})", style="dim")
        self.update(line)
