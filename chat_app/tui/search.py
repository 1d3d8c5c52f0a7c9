"""The search bar (Ctrl+F): it searches the channel on screen, first what
is loaded, newest first, then further back in SQLite in a worker thread; a
hit deep in the history loads everything from a little above it, so the view
stays one piece. Esc puts the reader back where the search started. That
nothing matches is said on the bar itself, in place of what it said before
(not a notice each key would stack up)."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input

from chat_app.store import Store, database_path
from chat_app.tui.history import is_ignored, merge_older, shown_rows
from chat_app.tui.model import MessageRow
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.field import Field

CONTEXT = 20  # messages loaded above a search hit found deep in the history


class SearchBar(Field):
    DEFAULT_CSS = """
    SearchBar { dock: bottom; margin-bottom: 3; border: tall $warning; display: none; }
    SearchBar.-no-match { border: tall $error; }
    """
    # A priority binding: Esc closes the search as the app reads it, so the keys
    # read after it in one burst go to the input, not to a search about to close.
    BINDINGS = [Binding("escape", "close", "Back", show=False, priority=True)]

    def __init__(self, data_dir: Path, view: ChannelView, back_to: Widget, **kwargs) -> None:
        """``back_to``: the widget that has the focus again once the search is over."""
        super().__init__(placeholder="Search this channel (Enter: older match, Esc: back)", **kwargs)
        self.data_dir = data_dir
        self.view = view
        self.back_to = back_to
        self._started_at: tuple[float, bool] | None = None  # (scroll_y, following)

    def open(self) -> None:
        if not self.display:
            self._started_at = (self.view.scroll_y, self.view.following)
            self.display = True
        # set_focus, not focus(): focus() moves it only once the app has handled
        # the keys already queued, so the letters read with Ctrl+F in one burst
        # would be typed in the input.
        self.screen.set_focus(self)

    def action_close(self) -> None:
        view = self.view
        self.display = False
        self.value = ""
        self._say_no_match(None)
        view.search_term = view.search_hit = None
        view.refresh()
        if self._started_at is not None:
            scroll_y, following = self._started_at
            if following:
                view.follow()
            else:
                view.scroll_to(y=scroll_y, animate=False)
        self._started_at = None
        self.screen.set_focus(self.back_to)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.find(event.value, older_than=None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.find(event.value, older_than=self.view.search_hit)

    def find(self, term: str, older_than: str | None) -> None:
        """Show the newest match older than ``older_than`` (or than anything):
        first among the loaded messages, then in the rest of the history."""
        view = self.view
        model = view.model
        view.search_term = term or None
        if model is None or not term:
            self._show_hit(None)
            return
        start = model.index(older_than) - 1 if older_than in model.by_id else len(model) - 1
        needle = term.lower()
        for index in range(start, -1, -1):
            if needle in model[index].text.lower():
                self._show_hit(model[index].message_id)
                return
        if model.history_complete or not len(model):
            self._no_match(term, older_than)
        else:
            self._search_store(model.name, term, model.page_before(), older_than)

    @work(thread=True, exclusive=True, group="search")
    def _search_store(self, channel: str, term: str, before: tuple[int, str], older_than: str | None) -> None:
        store = Store(database_path(self.data_dir))
        above, rows = [], []
        try:
            ignored = frozenset(store.ignored())
            hit = store.find_before(channel, term, *before)
            while hit is not None and is_ignored(hit.own, hit.sender_id, ignored):  # not shown: not a match
                hit = store.find_before(channel, term, hit.lamport, hit.message_id)
            if hit is not None:
                start = (hit.lamport, hit.message_id)
                above = store.messages_before(channel, *start, CONTEXT)
                rows = [*above, *store.messages_between(channel, start, before)]
            shown = shown_rows(store, channel, rows, ignored)
        finally:
            store.close()
        read_from = (rows[0].lamport, rows[0].message_id) if rows else None
        self.app.call_from_thread(self._store_searched, channel, term, older_than, hit and hit.message_id,
                                  shown, len(above) < CONTEXT, read_from)

    def _store_searched(self, channel: str, term: str, older_than: str | None, hit: str | None,
                        rows: list[MessageRow], complete: bool, read_from: tuple[int, str] | None) -> None:
        view = self.view
        if view.model is None or view.model.name != channel or view.search_term != term:
            return  # the user moved on
        if hit is None:
            self._no_match(term, older_than)
            return
        placed = merge_older(view.model, rows, complete, read_from)
        view.older_placed(placed.added, placed.on_top, placed.anchor)
        self._show_hit(hit)

    def _show_hit(self, message_id: str | None) -> None:
        self._say_no_match(None)
        view = self.view
        view.search_hit = message_id
        view.refresh()  # the hit's colours; it keeps its height
        if message_id is not None:
            view.scroll_to_message(message_id)

    def _no_match(self, term: str, older_than: str | None) -> None:
        self._say_no_match(f"no {'older ' if older_than else ''}match for {term!r}")

    def _say_no_match(self, said: str | None) -> None:
        """``said`` under the bar, in red (None: a match, or no term yet: nothing)."""
        self.border_subtitle = said
        self.set_class(said is not None, "-no-match")
