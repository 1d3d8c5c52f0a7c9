"""History paging: a channel's log is read from SQLite a page at a time (in
a worker thread, with a connection of its own), and put in place above what
is loaded without moving what the reader looks at. Messages of nicks the user
ignores are left out of every page, as they are left out of live traffic."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chat_app.store import Store, StoredMessage, database_path
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.widgets.channel_view import ChannelView

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen

PAGE = 500

Key = tuple[int, str]


@dataclass
class Page:
    rows: list[MessageRow]  # in log order, without the ignored nicks' messages
    read_from: Key | None  # the oldest message read, shown or not: the next page starts there
    complete: bool  # nothing older is left in the store
    ignored: frozenset[str]  # the ignored nicks (lower case) when it was read
    topic: tuple[str, str | None] | None = None  # the channel's topic (text, nick), read with the newest page


def row_from_stored(m: StoredMessage) -> MessageRow:
    return MessageRow(m.lamport, m.message_id, m.sender_id, m.nick or m.sender_id[:8],
                      m.text or "(undecodable message)", m.kind or "text", m.lamport, m.own,
                      ack=m.ack, peers=m.ack_peers, gaps=len(m.gaps))


def is_ignored(own: bool, nick: str | None, ignored: Iterable[str]) -> bool:
    """Ignoring hides others' messages by nick, whatever its case (never our own)."""
    return not own and nick is not None and nick.lower() in ignored


def shown_rows(stored: list[StoredMessage], ignored: frozenset[str]) -> list[MessageRow]:
    return [row_from_stored(m) for m in stored if not is_ignored(m.own, m.nick, ignored)]


def read_page(data_dir: Path, channel: str, before: Key | None) -> Page:
    """The newest page older than ``before`` (or the newest page). Blocking:
    run it in a thread."""
    store = Store(database_path(data_dir))
    try:
        ignored = frozenset(store.ignored())
        stored = (store.messages(channel, limit=PAGE) if before is None
                  else store.messages_before(channel, *before, PAGE))
        topic = store.topic(channel) if before is None else None
    finally:
        store.close()
    read_from = (stored[0].lamport, stored[0].message_id) if stored else None
    return Page(shown_rows(stored, ignored), read_from, len(stored) < PAGE, ignored,
                (topic.text or "", topic.nick) if topic is not None else None)


def place_page(model: ChannelModel, view: ChannelView, rows: list[MessageRow], before: Key | None,
               complete: bool, visible: bool, read_from: Key | None = None) -> None:
    """Put ``rows`` (in log order, read from the store) into ``model``;
    ``complete``: nothing older is left there; ``read_from``: the oldest
    message read, shown or not. When the channel is on screen (``visible``)
    the reader keeps looking at what they looked at."""
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
    if read_from is not None and (model.read_from is None or read_from < model.read_from):
        model.read_from = read_from
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
        self.ignored: frozenset[str] | None = None  # as the last page read found it

    def load(self, channel: str, before: Key | None = None) -> None:
        def read() -> None:
            page = read_page(self.chat.data_dir, channel, before)
            self.chat.app.call_from_thread(self.loaded, channel, page, before)

        self.chat.run_worker(read, thread=True, group="history")

    def older(self, channel: str) -> None:
        model = self.chat.models.get(channel)
        if model is not None and (before := model.page_before()) is not None:
            self.load(channel, before)

    def loaded(self, channel: str, page: Page, before: Key | None) -> None:
        chat = self.chat
        if (model := chat.models.get(channel)) is None:
            return
        if self.ignored is None:
            self.ignored = page.ignored
        if page.topic is not None and model.topic is None:  # a topic event since the read is newer
            chat.events.topic(channel, *page.topic)
        place_page(model, chat.view, page.rows, before, page.complete, channel == chat.current, page.read_from)
        if not page.rows and not page.complete:  # all ignored: nothing to scroll to, so read on
            self.older(channel)
        seen = chat.read_markers.get(channel)
        if before is None and seen is not None:  # the first page: what came since the reader was last here
            unseen = [row for row in page.rows if row.key > seen and not row.own]
            if channel != chat.current:
                model.unread += len(unseen)
                chat.navigator.refresh_channels()
            elif unseen and chat.view.marker_id is None:
                chat.view.set_marker(unseen[0].message_id)

    def ignoring(self, nicks: Iterable[str]) -> None:
        """The ignored nicks changed: their loaded messages go; a nick no
        longer ignored brings its messages back (every channel is read again)."""
        now = frozenset(n.lower() for n in nicks)
        before, self.ignored = self.ignored or frozenset(), now
        chat = self.chat
        if before - now:
            for model in chat.models.values():
                model.clear()
                self.load(model.name)
        elif now - before:
            for model in chat.models.values():
                gone = [r for r in model.entries if is_ignored(r.own, r.nick, now)]
                for row in gone:
                    model.remove(row)
                if gone and not model.history_complete:  # fill what they took from the page
                    self.older(model.name)
        if chat.current in chat.models and now != before:
            chat.view.relayout()
