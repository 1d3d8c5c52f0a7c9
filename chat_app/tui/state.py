"""The client's state, in one plain object.

Theory of operation: the node's typed events reach the chat screen on the
UI thread, one at a time. ``reducer.reduce`` changes this ``ClientState``
with one small function per event kind; what the user does (switching
channels, paging, folding lines away) changes it through the functions of
``channels``, ``history``, ``presence`` and ``direct``. Each returns effects
(``effects``): the aspects of the screen that changed, which the widgets
watching them draw again from here, and what else the screen must do (a
toast, a page to read, the history view to move). Nothing here knows
Textual, so every change is tested from a state to a state.

What the history view owns stays there: where the reader is scrolled, the
"new messages" rule, the search. The one view fact a change needs - whether
the reader is at the newest message - is copied into ``following`` before
each change.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from chat_app.events import Address
from chat_app.inert_text import inert
from chat_app.tui.model import ChannelModel, Member, MessageRow
from chat_app.tui.read_markers import ReadMarkers
from chat_app.tui.roster import Roster, nick_key
from chat_app.tui.settings import Settings


def is_direct(channel: str | None) -> bool:
    """A direct conversation is named ``@`` and the other person's id."""
    return bool(channel) and channel.startswith("@")


@dataclass
class Presence:
    """What the join, part, quit and nick lines are worked out from (``presence``)."""

    started_at: int | None = None  # when the node was ready: peers found soon after were there before us
    spoke_in: dict[str, set[str]] = field(default_factory=dict)  # peer -> channels it has spoken in
    newest: dict[str, int] = field(default_factory=dict)  # peer -> the lamport of its newest message seen
    lines: dict[str, list[MessageRow]] = field(default_factory=dict)  # channel -> its lines, shown or folded away
    ids: Iterator[int] = field(default_factory=itertools.count)


@dataclass
class ClientState:
    settings: Settings = field(default_factory=Settings)  # the app's, saved when a change says so
    read_markers: ReadMarkers = field(default_factory=ReadMarkers)
    highlight: list[str] = field(default_factory=list)  # words that count as a mention, besides our nick
    show_typing: bool = True
    channels: dict[str, ChannelModel] = field(default_factory=dict)  # sidebar order; direct conversations too
    current: str | None = None  # the channel on screen
    private: set[str] = field(default_factory=set)  # channels marked private in the sidebar
    svs: set[str] = field(default_factory=set)  # channels marked as running on State Vector Sync
    roster: Roster = field(default_factory=Roster)
    nick: str = ""
    peer_id: str = ""
    catching_up: dict[Address, list[str]] = field(default_factory=dict)  # replication under way, by peer
    ignored: frozenset[str] | None = None  # the ignored people (sender ids), once a page has told them
    direct_nicks: dict[str, str] = field(default_factory=dict)  # conversation -> the other person's nick
    trusted: set[str] = field(default_factory=set)  # peers whose key the user verified (/trust), as /whois told
    topic_asked: set[str] = field(default_factory=set)  # channels whose topic /topic asked for, not yet told
    shared_nicks: frozenset[str] = frozenset()  # nicks two keys or more use now (``nick_key``): with a key suffix
    presence: Presence = field(default_factory=Presence)
    question: tuple[str, str] | None = None  # (channel, row id) of a question in the buffer, until it is answered
    following: bool = True  # the reader is at the newest message of the current channel

    @property
    def current_model(self) -> ChannelModel | None:
        return self.channels.get(self.current) if self.current is not None else None

    def members_here(self) -> list[Member]:
        """Who the member list shows besides us: the channel's members, or
        the other person of a direct conversation, present or not."""
        if not is_direct(self.current):
            return self.roster.in_channel(self.current, self.presence.spoke_in)
        peer_id = self.current[1:]
        known = self.roster.members.get(peer_id)
        return [known or Member(peer_id, self.direct_nicks.get(self.current), 0, present=False)]

    def title(self, channel: str) -> str:
        """What the title bar calls a channel: ``#channel``, or ``@`` and the other person's nick (inert)."""
        return f"@{inert(self.direct_nicks.get(channel, channel[1:9]))}" if is_direct(channel) else f"#{channel}"

    def label(self, peer_id: str, nick: str) -> str:
        """How a peer's (inert) nick is shown: with the start of its id when
        another key uses the nick too (``bob~3f2a``: an impersonation shows),
        and a ✓ when the user verified its key."""
        shown = f"{nick}~{peer_id[:4]}" if peer_id and nick_key(nick) in self.shared_nicks else nick
        return f"{shown}✓" if peer_id in self.trusted else shown

    def typing_here(self, now: int) -> list[str]:
        model = self.current_model
        return model.typing_now(now) if model is not None and self.show_typing else []
