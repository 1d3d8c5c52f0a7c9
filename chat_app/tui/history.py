"""History paging: a channel's log is read from SQLite a page at a time (in
a worker thread, with a connection of its own), and put in place above what
is loaded without moving what the reader looks at."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from chat_app.store import Store, StoredMessage, database_path
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.widgets.channel_view import ChannelView

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen

PAGE = 500


def row_from_stored(m: StoredMessage) -> MessageRow:
    return MessageRow(m.lamport, m.message_id, m.sender_id, m.nick or m.sender_id[:8],
                      m.text or "(undecodable message)", m.kind or "text", m.lamport, m.own,
                      ack=m.ack, peers=m.ack_peers, gaps=len(m.gaps))


def read_page(data_dir: Path, channel: str, before: tuple[int, str] | None) -> tuple[list[MessageRow], bool]:
    """The newest page older than ``before`` (or the newest page), in log
    order, and whether nothing older is left. Blocking: run it in a thread."""
    store = Store(database_path(data_dir))
    try:
        rows = (store.messages(channel, limit=PAGE) if before is None
                else store.messages_before(channel, *before, PAGE))
    finally:
        store.close()
    return [row_from_stored(r) for r in rows], len(rows) < PAGE


def place_page(model: ChannelModel, view: ChannelView, rows: list[MessageRow], before: tuple[int, str] | None,
               complete: bool, visible: bool) -> None:
    """Put ``rows`` (in log order, read from the store) into ``model``;
    ``complete``: nothing older is left there. When the channel is on screen
    (``visible``) the reader keeps looking at what they looked at."""
    anchor = None
    oldest = model.oldest()
    if before is not None and oldest is not None and visible:
        anchor = (oldest.message_id, view.line_of(oldest.message_id) or 0)
    on_top = oldest is not None and bool(rows) and rows[-1].key < oldest.key
    added = 0
    for row in rows:
        if row.message_id not in model.by_id:
            model.upsert(row)
            added += 1
    model.history_complete |= complete
    if not visible:
        return
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


class Pager:
    """Reads a channel's pages for the chat screen: the newest when the
    channel is added, an older one whenever the view asks for it."""

    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat

    def load(self, channel: str, before: tuple[int, str] | None = None) -> None:
        def read() -> None:
            rows, complete = read_page(self.chat.data_dir, channel, before)
            self.chat.app.call_from_thread(self.loaded, channel, rows, before, complete)

        self.chat.run_worker(read, thread=True, group="history")

    def older(self, channel: str) -> None:
        model = self.chat.models.get(channel)
        if model is not None and model.oldest() is not None:
            self.load(channel, model.oldest().key)

    def loaded(self, channel: str, rows: list[MessageRow], before: tuple[int, str] | None, complete: bool) -> None:
        chat = self.chat
        if (model := chat.models.get(channel)) is None:
            return
        place_page(model, chat.view, rows, before, complete, visible=channel == chat.current)
        seen = chat.read_markers.get(channel)
        if before is None and seen is not None:  # the first page: what came since the reader was last here
            unseen = [row for row in rows if row.key > seen and not row.own]
            if channel != chat.current:
                model.unread += len(unseen)
                chat.navigator.refresh_channels()
            elif unseen and chat.view.marker_id is None:
                chat.view.set_marker(unseen[0].message_id)
