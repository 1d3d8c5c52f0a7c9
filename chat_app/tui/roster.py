"""Who is around: the peers the node told us of, their nicks, when they were
last heard and which channels they are in."""

from __future__ import annotations

import unicodedata

from chat_app import events as ev
from chat_app.inert_text import inert
from chat_app.wire_rule import without_invisibles
from chat_app.tui.model import Member


class Roster:
    def __init__(self) -> None:
        self.members: dict[str, Member] = {}
        self.my_away: str | None = None  # our own /away reason
        self.channels: dict[str, tuple[str, ...] | None] = {}  # None: not known
        self.svs: dict[str, tuple[str, ...]] = {}  # peer -> the channels it announces as running on SVS

    def present(self, event: ev.PeerJoined, now: int) -> None:
        member = self.members.get(event.peer_id)
        if member is None:
            self.members[event.peer_id] = Member(event.peer_id, event.nick, now)
        else:
            member.present, member.last_seen = True, now
            member.nick = event.nick or member.nick
        if event.channels is not None:
            self.channels[event.peer_id] = event.channels
            self.svs[event.peer_id] = event.svs

    def heard(self, peer_id: str, at: int) -> bool:
        """True if that changed what the member list shows."""
        member = self.members.get(peer_id)
        if member is None or not member.present:
            return False
        member.last_seen = max(member.last_seen, at)
        return True

    def left(self, peer_id: str) -> None:
        member = self.members.get(peer_id)
        if member is not None:
            member.present, member.away = False, None  # back later, it says again if still away

    def away(self, peer_id: str, reason: str | None) -> bool:
        """``peer_id`` said it is away (``reason``) or back (None); True if
        that changed what the member list shows."""
        member = self.members.get(peer_id)
        if member is None or member.away == reason:
            return False
        member.away = reason
        return True

    def spoke(self, peer_id: str, nick: str | None, now: int) -> bool:
        """A message from ``peer_id``: True if it told us a new nick."""
        member = self.members.get(peer_id)
        if member is None:
            return False
        member.last_seen = now
        if nick and member.nick != nick:
            member.nick = nick  # learned from the message (no mDNS, or a new nick)
            return True
        return False

    def in_channel(self, channel: str | None, spoke_in: dict[str, set[str]]) -> list[Member]:
        """The members of ``channel``: who announces it, and who announces no
        channel (found by its traffic, or a ``--peer``) but spoke in it
        (``spoke_in``). Listed everywhere, a stranger who wrote in #general
        would look like a member of a private channel it cannot read."""
        def member(pid: str) -> bool:
            if pid in self.channels:  # it announced its channels
                return channel in (self.channels[pid] or ())
            return channel in spoke_in.get(pid, ())
        return [m for pid, m in self.members.items() if member(pid)]

    def nicks(self) -> list[str]:
        """Nicks to complete: those shown as they are (a completed nick lands in the input line)."""
        return sorted({m.nick for m in self.members.values() if m.nick and inert(m.nick) == m.nick})

    def shared_nicks(self, me: tuple[str, str]) -> frozenset[str]:
        """The nicks that two keys or more use now, ``me`` (our id, our nick)
        among them, each as ``nick_key`` gives it."""
        users: dict[str, set[str]] = {}
        for peer_id, nick in [me, *((m.peer_id, m.nick) for m in self.members.values())]:
            if nick:
                users.setdefault(nick_key(nick), set()).add(peer_id)
        return frozenset(key for key, ids in users.items() if len(ids) > 1)

    def present_count(self) -> int:
        return sum(1 for m in self.members.values() if m.present)


def nick_key(nick: str) -> str:
    """What two nicks that read alike share: shown (``inert``), without what
    shows as nothing, in Unicode's compatibility form, case-folded and
    without spaces at either end, so ``Bob``, ``bob``, a fullwidth ``ｂｏｂ``
    and a ``bob`` stored before the nick rule with a combining grapheme
    joiner in it are one nick for telling keys apart (letters of other
    scripts that look Latin are not caught)."""
    return unicodedata.normalize("NFKC", without_invisibles(inert(nick))).casefold().strip()
