"""What the client shows of a channel, kept apart from how it is drawn.

Rows (one ``MessageRow`` per message) are ordered by (lamport, message_id) - the log order every peer
agrees on - so a message that waited for earlier history, or that arrives
late, simply takes its place. Only a window of the history is loaded; older
pages are read from SQLite when the user scrolls up.

A row's nick and text are made inert (``chat_app.inert_text``) when the row
is made, wherever it comes from - a live event, a page of the store (rows
stored before the wire rule too), a search, a join line quoting a nick - so
nothing drawn from it, its links included, can act on the terminal.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.console import Console
from sortedcontainers import SortedKeyList

from chat_app.file_offer import FileOffer
from chat_app.inert_text import inert

PALETTE = ("#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2",
           "#d19a66", "#7ec699", "#f08d49", "#cc99cd", "#6fb3d2", "#f2777a")

_VERSIONS = itertools.count()
"""Row versions, never reused: a row read again from the store (after
``ChannelModel.clear``) must not find the lines drawn for its earlier self."""

ACK_STATES = ("sending", "unacknowledged", "possibly_acknowledged", "acknowledged")
PRESENCE_KINDS = frozenset({"join", "part", "quit", "nick"})  # who came and went (``presence``)
NOTICE_KINDS = frozenset({"info", "error"})  # what a command answered, what we were told (``notices``)
LOCAL_KINDS = PRESENCE_KINDS | NOTICE_KINDS  # lines of the client's own, not messages


# On a 16-colour terminal (TERM=screen, the Linux console) the colours above
# would be brought down to the nearest of 16 and several would become the same
# red; these twelve stay apart (black, white and greys are left for the text).
PALETTE_16 = ("red", "green", "yellow", "blue", "magenta", "cyan", "bright_red", "bright_green",
              "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan")


def has_few_colours(environ: Mapping[str, str] = os.environ) -> bool:
    """Does this terminal show only 16 colours (as the Rich console Textual uses would detect)?"""
    console = Console(force_terminal=True, _environ=dict(environ), file=io.StringIO())
    return console.color_system in ("standard", "windows")


FEW_COLOURS = has_few_colours()


def nick_colour(sender_id: str, few_colours: bool | None = None) -> str:
    """A colour that stays the same for a sender, whatever nick it uses."""
    palette = PALETTE_16 if (FEW_COLOURS if few_colours is None else few_colours) else PALETTE
    return palette[zlib.crc32(sender_id.encode()) % len(palette)]


@dataclass
class MessageRow:
    """One message as the client shows it, with its delivery state."""

    lamport: int
    message_id: str
    sender_id: str
    nick: str
    text: str
    kind: str = "text"
    time_ms: int = 0
    own: bool = False
    ack: str | None = None  # for own messages: one of ACK_STATES
    peers: int = 0
    waiting_for: int = 0  # > 0: buffered, waiting for earlier history
    gaps: int = 0  # earlier messages given up as lost
    quote: str = ""  # a reply: its parent, on one line ("bob: the first words…"), as it reads now
    about: str = ""  # a reply: its parent's id
    edited: bool = False
    deleted: bool = False
    reactions: str = ""  # "👍 2  +1 1"
    offer: FileOffer | None = None  # a file message: shown as its name and size, whatever its text says
    version: int = field(default_factory=lambda: next(_VERSIONS))  # new on every change: the renderer's cache key

    def __post_init__(self) -> None:
        if self.offer is not None:
            self.text = self.offer.shown
        self.nick, self.text = inert(self.nick), inert(self.text, lines=True)
        self.quote, self.reactions = inert(self.quote), inert(self.reactions)

    def changed(self, text: str, edited: bool, deleted: bool, reactions: str) -> None:
        """What edits, a deletion and reactions made of it (``chat_app.annotations``);
        a file message's line stays as its offer reads, unless it was deleted."""
        if self.offer is None or deleted:
            self.text = inert(text, lines=True)
        self.reactions = inert(reactions)
        self.edited, self.deleted = edited, deleted
        self.version = next(_VERSIONS)

    def quoting(self, parent: MessageRow) -> None:
        """A reply quotes ``parent`` as it reads now (edited, deleted)."""
        self.quote = inert(quoted(parent.nick, parent.text))
        self.version = next(_VERSIONS)

    @property
    def key(self) -> tuple[int, str]:
        return (self.lamport, self.message_id)

    @property
    def is_local(self) -> bool:
        """A line of the client's own: a join, part, quit or nick-change line
        (``chat_app.tui.presence``), a notice (``chat_app.tui.notices``)."""
        return self.kind in LOCAL_KINDS


QUOTE = 60
"""How much of a reply's parent is quoted, in characters."""


def quoted(nick: str, text: str) -> str:
    """A reply's parent on one line: its nick, the start of its first line, cut."""
    first = text.split("\n", 1)[0]
    cut = first if len(first) <= QUOTE and "\n" not in text else first[:QUOTE - 1].rstrip() + "…"
    return f"{nick}: {cut}"


@dataclass
class Member:
    peer_id: str
    nick: str | None
    last_seen: int
    present: bool = True
    away: str | None = None  # the reason given with /away; None: not away


@dataclass
class ChannelModel:
    name: str
    entries: SortedKeyList = field(default_factory=lambda: SortedKeyList(key=lambda e: e.key))
    by_id: dict[str, MessageRow] = field(default_factory=dict)
    unread: int = 0
    mentions: int = 0
    history_complete: bool = False  # every older message is loaded
    read_from: tuple[int, str] | None = None  # the oldest message read from the store, shown or not
    topic: tuple[str, str | None] | None = None  # (text, who set it); None: none known
    typing: dict[str, tuple[str, int]] = field(default_factory=dict)  # peer id -> (nick, expires)
    spoke_at: dict[str, int] = field(default_factory=dict)  # peer id -> when its newest message arrived here
    waiting: set[str] = field(default_factory=set)  # ids of entries waiting for earlier history
    replies: dict[str, set[str]] = field(default_factory=dict)  # message id -> the loaded replies to it

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: int) -> MessageRow:
        return self.entries[index]

    def upsert(self, entry: MessageRow) -> MessageRow:
        """Add an entry, or update the one with its id (waiting -> delivered)."""
        old = self.by_id.get(entry.message_id)
        if old is not None:
            if old.ack is not None and entry.ack in (None, "unacknowledged"):
                entry.ack, entry.peers = old.ack, old.peers  # keep what acknowledgements told us
            self.entries.remove(old)
            entry.version = next(_VERSIONS)
        self.entries.add(entry)
        self.by_id[entry.message_id] = entry
        if entry.waiting_for:
            self.waiting.add(entry.message_id)
        else:
            self.waiting.discard(entry.message_id)
        if entry.about:
            self.replies.setdefault(entry.about, set()).add(entry.message_id)
        return entry

    def requote(self, parent: MessageRow) -> list[MessageRow]:
        """The loaded replies to ``parent``, each quoting it as it reads now."""
        replies = [self.by_id[reply_id] for reply_id in self.replies.get(parent.message_id, ())]
        for reply in replies:
            reply.quoting(parent)
        return replies

    def index(self, message_id: str) -> int:
        return self.entries.index(self.by_id[message_id])

    def acknowledge(self, message_id: str, state: str, peers: int) -> bool:
        entry = self.by_id.get(message_id)
        if entry is None or not entry.own:
            return False
        if ACK_STATES.index(state) < ACK_STATES.index(entry.ack or "sending"):
            return False  # never step back
        entry.ack, entry.peers = state, peers
        entry.version = next(_VERSIONS)
        return True

    def clear(self) -> None:
        """Forget every loaded row, to read the history again."""
        self.entries.clear()
        self.by_id.clear()
        self.waiting.clear()
        self.replies.clear()
        self.history_complete, self.read_from = False, None

    def clear_view(self) -> None:
        """``/clear``: forget every loaded row, and read no older page again:
        the view starts empty, and what arrives next follows."""
        newest = self.entries[-1].key if self.entries else None
        self.clear()
        self.history_complete, self.read_from = True, newest

    def remove(self, entry: MessageRow) -> None:
        self.entries.remove(entry)
        del self.by_id[entry.message_id]
        self.waiting.discard(entry.message_id)
        if entry.about and (replies := self.replies.get(entry.about)) is not None:
            replies.discard(entry.message_id)
            if not replies:
                del self.replies[entry.about]

    def oldest(self) -> MessageRow | None:
        return self.entries[0] if self.entries else None

    def last_messages(self, count: int, theirs: bool = False) -> list[MessageRow]:
        """The newest ``count`` messages, oldest first, passing over the client's
        own lines, and over our messages too if ``theirs`` (as unread counts do)."""
        found: list[MessageRow] = []
        index = len(self.entries) - 1
        while count > len(found) and index >= 0:
            if not self.entries[index].is_local and not (theirs and self.entries[index].own):
                found.append(self.entries[index])
            index -= 1
        return found[::-1]

    def before(self, row: MessageRow) -> tuple[int, str]:
        """A key just before ``row`` in log order, after every message loaded
        before it: the message before it, or one lamport earlier."""
        index = self.index(row.message_id) - 1
        while index >= 0 and self.entries[index].is_local:
            index -= 1
        return self.entries[index].key if index >= 0 else (row.lamport - 1, "")

    def page_before(self) -> tuple[int, str] | None:
        """Where the next older page starts: before everything loaded, and
        before what was read but not shown (an ignored person's messages)."""
        keys = [k for k in (self.read_from, self.entries[0].key if self.entries else None) if k is not None]
        return min(keys, default=None)

    def typing_now(self, now: int) -> list[str]:
        return sorted(nick for nick, expires in self.typing.values() if expires > now)


def typing_line(nicks: list[str]) -> str:
    nicks = [inert(nick) for nick in nicks]
    if not nicks:
        return ""
    if len(nicks) == 1:
        return f"{nicks[0]} is typing…"
    if len(nicks) == 2:
        return f"{nicks[0]} and {nicks[1]} are typing…"
    return "several people are typing…"


def highlight_pattern(nick: str, words: list[str]) -> str:
    """A regex matching ``nick`` or any of ``words`` as a word, any case."""
    alternatives = [rf"(?<![\w@]){re.escape(w)}(?!\w)" for w in (nick, *words) if w]
    return "(?i)" + "|".join(alternatives) if alternatives else r"(?!x)x"


def highlighted(text: str, nick: str, words: list[str]) -> bool:
    """Does ``text`` mention ``nick`` or one of the highlight ``words``?"""
    return re.search(highlight_pattern(nick, words), text) is not None


def mentions(text: str, nick: str) -> bool:
    """Does ``text`` mention ``nick`` as a word (case-insensitive)?"""
    return bool(nick) and highlighted(text, nick, [])
