"""The key bar at the bottom (Textual's footer). Without the sidebar's room
it is compact and leaves out the palette's key (the help names it); in a
narrow terminal it keeps only the keys a newcomer needs - help, quit,
search, switching channels - which the help lists with the rest."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ESSENTIAL = frozenset({"help", "quit", "search", "switcher"})  # the actions shown when narrow


class KeyBar(Footer):
    narrow = False

    def fit(self, wide: bool, narrow: bool) -> None:
        """Compact unless ``wide``; the essential keys only when ``narrow``."""
        self.compact, self.show_command_palette, self.narrow = not wide, wide, narrow
        self.refresh(recompose=True)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if not (self.narrow and isinstance(widget, FooterKey) and widget.action not in ESSENTIAL):
                yield widget
