"""The bottom line: peers connected, sync state, where the data lives."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $boost;
        padding: 0 1;
    }
    StatusBar Label { width: auto; margin-right: 2; }
    StatusBar #sync-progress { width: 24; display: none; }
    StatusBar #sync-progress.active { display: block; }
    StatusBar #data-dir { color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Label("starting…", id="peers")
        yield Label("", id="sync")
        yield ProgressBar(id="sync-progress", show_eta=False, show_percentage=True)
        yield Label("", id="data-dir")

    def show(self, peers: int, waiting: int, received: int, data_dir: str, replicating: int = 0) -> None:
        self.query_one("#peers", Label).update(f"{peers} peer{'s' if peers != 1 else ''} connected")
        bar = self.query_one("#sync-progress", ProgressBar)
        if waiting:
            self.query_one("#sync", Label).update(f"catching up: {waiting} waiting for history")
            bar.add_class("active")
            bar.update(total=received + waiting, progress=received)
        elif replicating:
            plural = "s" if replicating > 1 else ""
            self.query_one("#sync", Label).update(f"catching up with {replicating} peer{plural}…")
            bar.remove_class("active")
        else:
            self.query_one("#sync", Label).update("in sync")
            bar.remove_class("active")
        self.query_one("#data-dir", Label).update(data_dir)
