"""The bottom line: the activity list (channels with unread messages, by
their Alt+number, as WeeChat's hotlist: ``[2:#dev 3:@bob*]``, ``*`` where
you were mentioned), peers connected, sync state, where the data lives.
The activity list comes first: it stays on screen when the terminal is
narrow and the sidebar folded away. Narrower still (``narrow``), the rest
take short forms, and where the data lives is left out."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Label, ProgressBar

from chat_app.tui.channels import sidebar_order
from chat_app.tui.state import ClientState


def activity(state: ClientState) -> Text:
    """``[2:#dev 3:@bob*]``: each channel but the current one with unread
    messages, numbered as Alt+number goes there; mentions in bold, with a ``*``."""
    text = Text()
    for number, name in enumerate(sidebar_order(state), 1):
        model = state.channels[name]
        if name == state.current or not model.unread:
            continue
        text.append(" " if text else "[")
        text.append(f"{number}:{state.title(name)}" + ("*" if model.mentions else ""),
                    style="bold magenta" if model.mentions else "bold")
    return text.append("]") if text else text


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $boost;
        padding: 0 1;
    }
    StatusBar Label { width: auto; margin-right: 2; }
    StatusBar #activity { margin-right: 1; }
    StatusBar #sync-progress { width: 24; display: none; }
    StatusBar #sync-progress.active { display: block; }
    StatusBar #data-dir { color: $text-muted; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    StatusBar.-narrow #data-dir, StatusBar.-narrow #sync-progress.active { display: none; }
    StatusBar.-narrow Label { margin-right: 1; }
    """
    narrow = reactive(False, toggle_class="-narrow")

    def __init__(self, data_dir: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.where = data_dir
        # Held, not queried: the node's events can arrive before this bar is
        # composed or after it is taken down at exit.
        self.activity = Label("", id="activity")
        self.peers = Label("starting…", id="peers")
        self.sync = Label("", id="sync")
        self.bar = ProgressBar(id="sync-progress", show_eta=False, show_percentage=True)
        self.data_dir = Label("", id="data-dir")

    def compose(self) -> ComposeResult:
        yield from (self.activity, self.peers, self.sync, self.bar, self.data_dir)

    def show_activity(self, state: ClientState) -> None:
        shown = activity(state)
        self.activity.update(shown)
        self.activity.display = bool(shown.plain)

    def show_state(self, state: ClientState) -> None:
        models = state.channels.values()
        self.show(state.roster.present_count(), sum(len(m.waiting) for m in models), sum(len(m) for m in models),
                  self.where, len(state.catching_up))

    def show(self, peers: int, waiting: int, received: int, data_dir: str, replicating: int = 0) -> None:
        short = self.narrow
        self.peers.update(f"{peers} peer{'s' if peers != 1 else ''}" + ("" if short else " connected"))
        if waiting:
            self.sync.update(f"catching up: {waiting}" + ("" if short else " waiting for history"))
            self.bar.add_class("active")
            self.bar.update(total=received + waiting, progress=received)
        elif replicating:
            plural = "s" if replicating > 1 else ""
            self.sync.update("catching up…" if short else f"catching up with {replicating} peer{plural}…")
            self.bar.remove_class("active")
        else:
            self.sync.update("in sync")
            self.bar.remove_class("active")
        self.data_dir.update(data_dir)
