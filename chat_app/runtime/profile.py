"""Who we are to the others, and what the user asks about people.

Our nick and our away reason travel in every channel (the away reason again
whenever a newcomer appears, see ``greet``); the addresses and port others
reach us at are what the adapter found when it bound its sockets. ``/whois``
and ``/trust`` ask ``People``, with us counted among them.
"""

from __future__ import annotations

from chat_app import events as ev
from chat_app.crypto import Identity
from chat_app.payload import Payload
from chat_app.wire_rule import chosen_nick_problem, repaired_nick, text_problem
from chat_app.runtime.channels import Channels
from chat_app.runtime.people import People
from chat_app.runtime.peers import PeerTracker
from chat_app.store import Store

MAX_AWAY = 200
"""Characters of an away reason: it rides in one ephemeral datagram."""


class Profile:
    def __init__(self, store: Store, identity: Identity, nick: str, *, channels: Channels, people: People,
                 peers: PeerTracker, emit: ev.Emit) -> None:
        self.store, self.identity = store, identity
        # a nick saved before the rule, or a login name, is repaired: it travels in every payload
        self.nick = repaired_nick(nick, f"peer-{identity.sender_id[:6]}")
        self.given = nick  # as given: ``start`` says so if it had to be repaired
        self.away: str | None = None  # our reason for being away
        self.addresses: tuple[str, ...] = ()  # where others reach us (set by the adapter)
        self.port = 0
        self._channels, self._people, self._peers, self._emit = channels, people, peers, emit

    def start(self) -> None:
        """Say that the nick given could not be used, and which one is used instead."""
        if self.nick != self.given:
            self._emit([ev.Error(f"the nick {self.given!r} cannot be used: {chosen_nick_problem(self.given)}; "
                                 f"you are {self.nick} (/nick to choose another)"),
                        ev.NickChanged(self.given, self.nick)])

    def set_nick(self, nick: str) -> bool:
        if (problem := chosen_nick_problem(nick)) is not None:
            self._emit([ev.Error(f"/nick {nick!r}: {problem}")])
            return False
        old, self.nick = self.nick, nick
        self.store.set_nick(nick)
        self._emit([ev.NickChanged(old, nick)])
        return True

    def set_away(self, reason: str, now: int) -> None:
        """Tell every channel we are away (``reason``), or back (empty)."""
        if len(reason) > MAX_AWAY:
            return self._emit([ev.Error(f"an away reason is at most {MAX_AWAY} characters")])
        if (problem := text_problem(reason, "away")) is not None:
            return self._emit([ev.Error(problem)])
        self.away = reason or None
        self._emit([ev.PeerAway(self.identity.sender_id, self.nick, self.away)])
        self._say_away(now)

    def greet(self, now: int) -> None:
        """A peer appeared: if we are away, it learns so."""
        if self.away is not None:
            self._say_away(now)

    def _say_away(self, now: int) -> None:
        self._channels.notice(Payload("away", self.nick, self.away or "", sent_at=now), now)

    def whois(self, nick: str, now: int) -> None:
        ours = [(a, self.port) for a in self.addresses]
        self._people.seen(self.identity.sender_id, self.identity.public_key, self.nick, now, ours)
        self._emit([self._people.whois(nick.lstrip("@"), self._peers.addresses_of)])

    def trust(self, argument: str, now: int) -> None:
        self._emit([self._people.trust(argument)])
