"""Join, part, quit and nick-change lines in the channel view, dimmed, as
WeeChat shows them ("--> bob has joined #general").

They are read off what the node already reports about peers: an announcement
whose channels grew or shrank, a peer that left, a nick that changed (in an
announcement or in a message). A peer whose channels were never announced
(found by its traffic) is known to be in the channels it speaks in. The
peers found in the first seconds after start were there before us: they are
shown in the member list, not announced as joining.

The lines live in the client only (not stored, not synced). Each sits after
the newest message loaded at the moment it happened, and never counts as
unread. F4 folds them away and brings them back (the ``joins`` setting).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from chat_app import events as ev
from chat_app.tui.direct import is_direct
from chat_app.tui.model import MessageRow

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen

ALREADY_HERE_MS = 5_000
"""Peers that appear this soon after start were there before us (mDNS finds
them within a second or two): no join line for them."""


class PresenceLines:
    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat
        self.started_at: int | None = None
        self.spoke_in: dict[str, set[str]] = {}  # peer -> channels it has spoken in
        self.newest: dict[str, int] = {}  # peer -> the lamport of its newest message seen
        self._ids = itertools.count()
        self.lines: dict[str, list[MessageRow]] = {}  # channel -> its lines, shown or folded away

    def where(self, peer_id: str) -> list[str]:
        """Our channels ``peer_id`` is known to be in."""
        channels = set(self.chat.roster.channels.get(peer_id) or ()) | self.spoke_in.get(peer_id, set())
        return [c for c in self.channels() if c in channels]

    def channels(self) -> list[str]:
        """Our channels: a direct conversation is no channel anyone joins or parts."""
        return [c for c in self.chat.models if not is_direct(c)]

    def peer_changed(self, event: ev.PeerJoined, now: int) -> None:
        """Call before the roster takes in ``event``: it compares with what the roster knew."""
        roster = self.chat.roster
        member = roster.members.get(event.peer_id)
        was_here = member is not None and member.present
        before = set(self.where(event.peer_id)) if was_here else set()
        nick = event.nick or (member.nick if member else None) or event.peer_id[:8]
        if was_here and member.nick and event.nick and member.nick != event.nick:
            for channel in before:
                self.add(channel, "nick", event.peer_id, f"{member.nick} is now known as {event.nick}", now)
        if event.channels is None:
            return
        after = {c for c in self.channels() if c in event.channels}
        quiet = not was_here and self.started_at is not None and now - self.started_at < ALREADY_HERE_MS
        for channel in self.channels():
            if channel in after and channel not in before and not quiet:
                self.add(channel, "join", event.peer_id, f"{nick} ({event.peer_id[:8]}) has joined #{channel}", now)
            elif channel in before and channel not in after:
                self.add(channel, "part", event.peer_id, f"{nick} has left #{channel}", now)
                self.spoke_in.get(event.peer_id, set()).discard(channel)

    def left(self, peer_id: str, now: int) -> None:
        """Call before the roster marks ``peer_id`` gone."""
        member = self.chat.roster.members.get(peer_id)
        if member is None or not member.present:
            return
        for channel in self.where(peer_id):
            self.add(channel, "quit", peer_id, f"{member.nick or peer_id[:8]} has quit", now)
        self.spoke_in.pop(peer_id, None)

    def spoke(self, peer_id: str, channel: str, nick: str | None, lamport: int, now: int) -> None:
        """A message from ``peer_id``; call before the roster learns its nick.
        Only a message newer than its others can tell a new nick: an old one
        caught up from the history says the nick it had then."""
        member = self.chat.roster.members.get(peer_id)
        newest = lamport > self.newest.get(peer_id, -1)
        if newest:
            self.newest[peer_id] = lamport
        if newest and member is not None and member.present and member.nick and nick and member.nick != nick:
            for where in self.where(peer_id) or [channel]:
                self.add(where, "nick", peer_id, f"{member.nick} is now known as {nick}", now)
        if not is_direct(channel):
            self.spoke_in.setdefault(peer_id, set()).add(channel)

    def my_nick(self, old: str, nick: str, now: int) -> None:
        for channel in self.chat.models:
            self.add(channel, "nick", self.chat.peer_id, f"you are now known as {nick}", now)

    def add(self, channel: str, kind: str, peer_id: str, text: str, now: int) -> None:
        model = self.chat.models.get(channel)
        if model is None:
            return
        lamport = model.entries[-1].lamport if len(model) else 0
        arrow = {"join": "-->", "part": "<--", "quit": "<--"}.get(kind, "--")
        row = MessageRow(lamport, f"~presence-{next(self._ids):08d}", peer_id, arrow, text, kind, now)
        self.lines.setdefault(channel, []).append(row)
        if not self.chat.settings.joins:
            return
        model.upsert(row)
        view = self.chat.view
        if channel == self.chat.current:
            following = view.following
            view.placed(row, replaced=False)
            if following:
                view.follow()

    def toggle(self) -> None:
        """Fold the lines away, or bring them back where they were."""
        chat = self.chat
        shown = chat.settings.joins = not chat.settings.joins
        chat.app.save_settings()
        for channel, rows in self.lines.items():
            if (model := chat.models.get(channel)) is not None:
                for row in rows:
                    if shown:
                        model.upsert(row)
                    elif row.message_id in model.by_id:
                        model.remove(row)
        if chat.current is not None:
            following = chat.view.following
            chat.view.relayout()
            if following:
                chat.view.follow()
        chat.notify(f"join, part and quit lines {'shown' if shown else 'hidden'}")

    def forget(self, channel: str) -> None:
        """We left ``channel``: its lines go with it."""
        self.lines.pop(channel, None)
