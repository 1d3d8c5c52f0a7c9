"""History paging for the client: the channel's log is read from SQLite a
page at a time, in worker threads with a connection of their own, and put
in place above what is loaded without moving what the reader looks at."""

from __future__ import annotations

from textual import work

from chat_app.store import Store, StoredMessage, database_path
from chat_app.tui.model import Entry

PAGE = 500


def entry_from_row(m: StoredMessage) -> Entry:
    return Entry(m.lamport, m.message_id, m.sender_id, m.nick or m.sender_id[:8], m.text or "(undecodable message)",
                 m.kind or "text", m.lamport, m.own, ack=m.ack, peers=m.ack_peers, gaps=len(m.gaps))


class HistoryPaging:
    """Part of the app (it reads ``models``, ``view``, ``current``, ``data_dir``)."""

    @work(thread=True, group="history")
    def load_history(self, channel: str, before: tuple[int, str] | None = None) -> None:
        store = Store(database_path(self.data_dir))
        try:
            rows = (store.messages(channel, limit=PAGE) if before is None
                    else store.messages_before(channel, *before, PAGE))
        finally:
            store.close()
        self.call_from_thread(self._history_loaded, channel, [entry_from_row(r) for r in rows], before,
                              len(rows) < PAGE)

    def _history_loaded(self, channel: str, entries: list[Entry], before: tuple[int, str] | None,
                        complete: bool) -> None:
        """``entries`` (in log order) were read from the store; ``complete``:
        nothing older is left there."""
        model = self.models.get(channel)
        if model is None:
            return
        view = self.view
        anchor = None
        oldest = model.oldest()
        if before is not None and oldest is not None and channel == self.current:
            anchor = (oldest.message_id, view.line_of(oldest.message_id) or 0)
        on_top = oldest is not None and bool(entries) and entries[-1].key < oldest.key
        added = 0
        for entry in entries:
            if entry.message_id not in model.by_id:
                model.upsert(entry)
                added += 1
        model.history_complete |= complete
        if channel == self.current:
            if before is None:
                view.relayout()
                if view.following:  # a late first page must not yank a reader who scrolled up
                    view.follow()
            else:
                if on_top:  # the usual case: all older than what was loaded
                    view.prepended(added, anchor)
                else:  # another load got there first
                    view.relayout(anchor)
                view.older_loaded()
