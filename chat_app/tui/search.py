"""Searching a channel (Ctrl+F): first what is loaded, newest first, then
further back in SQLite in a worker thread; a hit deep in the history loads
everything from a little above it, so the view stays one piece. Esc puts
the reader back where the search started."""

from __future__ import annotations

from textual import work

from chat_app.store import Store, database_path
from chat_app.tui.history import entry_from_row
from chat_app.tui.model import Entry

CONTEXT = 20  # messages loaded above a search hit found deep in the history


class HistorySearch:
    """Part of the app (it reads ``models``, ``view``, ``search``, ``current``)."""

    def action_search(self) -> None:
        search = self.search
        view = self.view
        if not search.display:
            self._search_from = (view.scroll_y, view.following)
            search.display = True
        search.focus()

    def _find(self, term: str, older_than: str | None) -> None:
        """Show the newest match older than ``older_than`` (or than anything):
        first among the loaded messages, then in the rest of the history."""
        view = self.view
        model = self.models.get(self.current) if self.current else None
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
            self.search_history(model.name, term, model.oldest().key, older_than)

    @work(thread=True, exclusive=True, group="search")
    def search_history(self, channel: str, term: str, before: tuple[int, str], older_than: str | None) -> None:
        """Look further back in SQLite; on a match, load everything from a
        little above it to what is loaded, so the view stays one piece."""
        store = Store(database_path(self.data_dir))
        above, rows = [], []
        try:
            hit = store.find_before(channel, term, *before)
            if hit is not None:
                start = (hit.lamport, hit.message_id)
                above = store.messages_before(channel, *start, CONTEXT)
                rows = [*above, *store.messages_between(channel, start, before)]
        finally:
            store.close()
        self.call_from_thread(self._history_searched, channel, term, older_than, before,
                              hit and hit.message_id, [entry_from_row(r) for r in rows], len(above) < CONTEXT)

    def _history_searched(self, channel: str, term: str, older_than: str | None, before: tuple[int, str],
                          hit: str | None, entries: list[Entry], complete: bool) -> None:
        if channel != self.current or self.view.search_term != term:
            return  # the user moved on
        if hit is None:
            self._no_match(term, older_than)
            return
        self._history_loaded(channel, entries, before, complete)
        self._show_hit(hit)

    def _show_hit(self, message_id: str | None) -> None:
        view = self.view
        view.search_hit = message_id
        view.refresh()  # the hit's colours; it keeps its height
        if message_id is not None:
            view.scroll_to_message(message_id)

    def _no_match(self, term: str, older_than: str | None) -> None:
        self.notify(f"no {'older ' if older_than else ''}match for {term!r}", severity="warning")

    def close_search(self) -> None:
        search = self.search
        view = self.view
        search.display = False
        search.value = ""
        view.search_term = view.search_hit = None
        view.refresh()
        if self._search_from is not None:
            scroll_y, following = self._search_from
            if following:
                view.follow()
            else:
                view.scroll_to(y=scroll_y, animate=False)
        self._search_from = None
        self.input.focus()
