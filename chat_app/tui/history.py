"""History paging: a channel's log is read from SQLite a page at a time (in
a worker thread, with a connection of its own), and put in place above what
is loaded without moving what the reader looks at. Messages of people the user
ignores are left out of every page, as they are left out of live traffic."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chat_app.annotations import CHANGING_KINDS, derive
from chat_app.file_offer import stored_offer
from chat_app.store import Store, StoredMessage, database_path
from chat_app.tui.channels import set_topic
from chat_app.tui.effects import Aspect, Changed, Effect, Key, OlderPlaced, ReadPage, Relayout, Unseen
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.state import ClientState

PAGE = 500


@dataclass
class Page:
    rows: list[MessageRow]  # in log order, without the ignored people's messages
    read_from: Key | None  # the oldest message read, shown or not: the next page starts there
    complete: bool  # nothing older is left in the store
    ignored: frozenset[str]  # the ignored people (sender ids) when it was read
    topic: tuple[str, str | None] | None = None  # the channel's topic (text, nick), read with the newest page


def row_from_stored(m: StoredMessage) -> MessageRow:
    return MessageRow(m.lamport, m.message_id, m.sender_id, m.nick or m.sender_id[:8],
                      m.text or "(undecodable message)", m.kind or "text", m.lamport, m.own,
                      ack=m.ack, peers=m.ack_peers, gaps=len(m.gaps),
                      about=(m.about or "") if m.kind == "reply" else "", offer=stored_offer(m.kind, m.text))


def is_ignored(own: bool, sender_id: str, ignored: Iterable[str]) -> bool:
    """Ignoring hides others' messages by their key, whatever nick they take (never our own)."""
    return not own and sender_id in ignored


def shown_rows(store: Store, channel: str, stored: list[StoredMessage], ignored: frozenset[str]) -> list[MessageRow]:
    """The rows of ``stored`` (read from ``store``) that are lines, but the
    ignored people's, each as its edits, deletion and reactions leave it; a
    reply quotes its parent as it reads now, edited or deleted."""
    shown = derived_rows(store, channel, [m for m in stored if m.kind not in CHANGING_KINDS
                                          and not is_ignored(m.own, m.sender_id, ignored)])
    elsewhere = sorted({row.about for row in shown.values() if row.about} - shown.keys())  # not on this page
    parents = derived_rows(store, channel, [p for i in elsewhere if (p := store.message(channel, i)) is not None])
    for row in shown.values():
        if row.about and (parent := shown.get(row.about) or parents.get(row.about)) is not None:
            row.quoting(parent)
    return list(shown.values())


def derived_rows(store: Store, channel: str, stored: list[StoredMessage]) -> dict[str, MessageRow]:
    """A row for each of ``stored``, by id, as the edits, deletion and
    reactions about it leave it (one index read for all that is about them)."""
    about: dict[str, list[StoredMessage]] = {}
    for note in store.about(channel, [m.message_id for m in stored]):
        about.setdefault(note.about, []).append(note)
    rows = {}
    for m in stored:
        row = rows[m.message_id] = row_from_stored(m)
        if m.message_id in about:
            derived, _ = derive(m, about[m.message_id])
            row.changed(derived.text, derived.edited, derived.deleted, derived.reaction_line)
    return rows


def read_page(data_dir: Path, channel: str, before: Key | None) -> Page:
    """The newest page older than ``before`` (or the newest page). Blocking:
    run it in a thread."""
    store = Store(database_path(data_dir))
    try:
        ignored = frozenset(store.ignored())
        stored = (store.messages(channel, limit=PAGE) if before is None
                  else store.messages_before(channel, *before, PAGE))
        topic = store.topic(channel) if before is None else None
        rows = shown_rows(store, channel, stored, ignored)
    finally:
        store.close()
    read_from = (stored[0].lamport, stored[0].message_id) if stored else None
    return Page(rows, read_from, len(stored) < PAGE, ignored,
                (topic.text or "", topic.nick) if topic is not None else None)


def merge_older(model: ChannelModel, rows: list[MessageRow], complete: bool, read_from: Key | None) -> OlderPlaced:
    """Put ``rows`` (in log order, read from the store) into ``model``;
    ``complete``: nothing older is left there; ``read_from``: the oldest
    message read, shown or not. Says how, for the view to keep the reader
    looking at what they looked at."""
    oldest = model.oldest()
    on_top = oldest is not None and bool(rows) and rows[-1].key < oldest.key
    added = 0
    for row in rows:
        if row.message_id not in model.by_id:
            model.upsert(row)
            added += 1
    model.history_complete |= complete
    if read_from is not None and (model.read_from is None or read_from < model.read_from):
        model.read_from = read_from
    return OlderPlaced(added, on_top, oldest.message_id if oldest is not None else None)


def older_page(state: ClientState, channel: str) -> list[Effect]:
    """The view came near the top of what is loaded: read the page before it."""
    model = state.channels.get(channel)
    if model is not None and (before := model.page_before()) is not None:
        return [ReadPage(channel, before)]
    return []


def page_read(state: ClientState, channel: str, page: Page, before: Key | None) -> list[Effect]:
    """A page of ``channel`` came from the store: the newest (``before`` None,
    read when the channel was added) or an older one."""
    if (model := state.channels.get(channel)) is None:
        return []
    if state.ignored is None:
        state.ignored = page.ignored
    effects: list[Effect] = []
    if page.topic is not None and model.topic is None:  # a topic event since the read is newer
        effects += set_topic(state, channel, *page.topic)
    visible = channel == state.current
    placed = merge_older(model, page.rows, page.complete, page.read_from)
    if visible:
        effects.append(placed if before is not None else Relayout(follow=state.following))
    if not page.rows and not page.complete:  # all ignored: nothing to scroll to, so read on
        effects += older_page(state, channel)
    seen = state.read_markers.get(channel)
    if before is None and seen is not None:  # the first page: what came since the reader was last here
        unseen = [row for row in page.rows if row.key > seen and not row.own]
        if not visible:
            model.unread += len(unseen)
            effects.append(Changed(Aspect.SIDEBAR))
        elif unseen:
            effects.append(Unseen(unseen[0].message_id))
    return effects


def ignoring(state: ClientState, sender_ids: Iterable[str]) -> list[Effect]:
    """The ignored people changed: their loaded messages go; someone no
    longer ignored brings their messages back (every channel is read again)."""
    now = frozenset(sender_ids)
    before, state.ignored = state.ignored or frozenset(), now
    effects: list[Effect] = []
    if before - now:
        for model in state.channels.values():
            model.clear()
            effects.append(ReadPage(model.name))
    elif now - before:
        for model in state.channels.values():
            gone = [r for r in model.entries if is_ignored(r.own, r.sender_id, now)]
            for row in gone:
                model.remove(row)
            if gone and not model.history_complete:  # fill what they took from the page
                effects += older_page(state, model.name)
    if state.current in state.channels and now != before:
        effects.append(Relayout())
    return effects
