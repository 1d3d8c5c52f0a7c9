"""People, not just nicks: who holds which key, and whom the user trusts.

A nick is whatever a peer says it is; a key is who it is. Every delivered
message and every announcement tells us a nick and (through the verified
envelope, or the key an announcement's id is the hash of) a public key.
``whois`` shows every key that used a nick, with the fingerprint people
read to each other to compare, and a short suffix to tell two equal nicks
apart. ``trust`` records that the user compared a nick's fingerprint (kept in
the store): the key is trusted, whatever nick it goes by later, and from then
on a message under that nick - or under a new nick the trusted key took - from
another key is reported loudly (``KeyChanged``), once per key.

``/ignore`` is of a person too: the keys seen under the nick given, kept in
the store, shown by the nick each goes by now; a new nick does not bring an
ignored person back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.crypto import fingerprint

MAX_PEOPLE = 4096
"""Keys remembered: anyone can make keys, so memory stays bounded."""


def _compact(fp: str) -> str:
    return fp.replace(" ", "").lower()


@dataclass
class Person:
    sender_id: str
    public_key: bytes
    nick: str
    first_seen: int
    last_seen: int
    addresses: list = field(default_factory=list)

    @cached_property
    def fingerprint(self) -> str:
        """Worked out once: every message of the person is checked against the user's trusted keys."""
        return fingerprint(self.public_key)


class People:
    def __init__(self, store) -> None:
        self.store = store
        self._people: Latest[str, Person] = Latest(MAX_PEOPLE)  # anyone can make keys: the one seen longest ago goes
        self._flagged: set[str] = set()
        self._verified: set[str] = set()  # told the client this run (ev.Verified)
        self._was: dict[str, str] = {}  # new sender id -> the legacy id it proved it had
        self._claimed: set[str] = set()
        self._trust: dict[str, str | None] = {}  # nick -> the checked fingerprint: read once, not per message
        self._trusted_keys = store.keys.trusted_fingerprints()  # the user's own checks: a handful
        self.ignored: dict[str, str] = store.ignored()  # sender id -> the nick it goes by

    def _trusted(self, nick: str) -> str | None:
        if nick not in self._trust:
            if len(self._trust) >= MAX_PEOPLE:  # anyone can make up nicks
                self._trust.clear()
            self._trust[nick] = self.store.keys.trusted(nick)
        return self._trust[nick]

    def rekeyed(self, old_sender_id: str, new_sender_id: str) -> None:
        """A verified rekey: ``new`` showed the secret behind ``old``. The
        first statement for an old id is kept (see ``chat_app.crypto.migration``)."""
        if old_sender_id not in self._claimed and len(self._was) < MAX_PEOPLE:
            self._claimed.add(old_sender_id)
            self._was[new_sender_id] = old_sender_id

    def seen(self, sender_id: str, public_key: bytes | None, nick: str, now: int,
             addresses: list | None = None) -> list[ev.AppEvent]:
        """``sender_id`` (holding ``public_key``) spoke or announced itself as ``nick``."""
        person = self._people.get(sender_id)
        if person is None:
            if public_key is None:
                return []
            person = Person(sender_id, public_key, nick, now, now)
            self._people.put(sender_id, person)
        else:
            self._people.touch(sender_id)
        person.nick, person.last_seen = nick, now
        if self.ignored.get(sender_id, nick) != nick:  # the list shows them by the nick they go by now
            self.ignored[sender_id] = nick
            self.store.set_ignored(sender_id, nick)
        if addresses:
            person.addresses = list(addresses)
        trusted, key = self._trusted(nick), _compact(person.fingerprint)
        if key in self._trusted_keys:
            if trusted is None:  # a trusted person's new nick is theirs too: an impostor under it is flagged
                self._remember_trust(nick, key)
            if sender_id in self._verified or len(self._verified) >= MAX_PEOPLE:
                return []
            self._verified.add(sender_id)
            return [ev.Verified(nick, sender_id)]
        if trusted is None or sender_id in self._flagged:
            return []
        self._flagged.add(sender_id)
        return [ev.KeyChanged(nick, sender_id, person.fingerprint, _spaced(trusted))]

    def by_nick(self, nick: str) -> list[tuple[str, bytes]]:
        """(sender id, public key) of everyone seen lately under ``nick``."""
        return [(p.sender_id, p.public_key) for p in self._people.values() if p.nick == nick]

    def ignore(self, nick: str | None, us: str) -> ev.AppEvent:
        """``/ignore nick``: ignore everyone seen under ``nick`` (whatever its
        case) - lately, else in the history - or stop if it names people
        ignored; None: just the list."""
        if nick:
            wanted = nick.removeprefix("@").lower()
            if ignored := [s for s, n in self.ignored.items() if n.lower() == wanted]:
                for sender_id in ignored:
                    del self.ignored[sender_id]
                    self.store.set_ignored(sender_id, None)
            else:
                found = ({p.sender_id: p.nick for p in self._people.values() if p.nick.lower() == wanted}
                         or self.store.authors_called(wanted))
                found.pop(us, None)
                if not found:
                    return ev.Error(f"nobody called {nick} has been seen: /ignore takes the nick of someone who "
                                    f"spoke or is on the network (/peers)")
                for sender_id, seen_as in found.items():
                    self.ignored[sender_id] = seen_as
                    self.store.set_ignored(sender_id, seen_as)
        listed = sorted(self.ignored.items(), key=lambda item: (item[1].lower(), item[0]))
        return ev.Ignoring(tuple(n for _, n in listed), tuple(s for s, _ in listed))

    def hides(self, event: ev.AppEvent) -> bool:
        """Whether ``event`` is someone ignored speaking or typing (never us)."""
        if isinstance(event, ev.MessageDelivered | ev.MessageWaiting):
            return not getattr(event, "own", False) and event.sender_id in self.ignored
        return isinstance(event, ev.Typing) and event.peer_id in self.ignored

    def whois(self, nick: str, addresses_of) -> ev.Whois:
        found = [p for p in self._people.values() if p.nick == nick]
        return ev.Whois(nick, tuple(
            {"sender_id": p.sender_id, "fingerprint": p.fingerprint, "short": f"{nick}~{p.fingerprint[:4]}",
             "addresses": [list(a) for a in (addresses_of(p.sender_id) or p.addresses)],
             "first_seen": p.first_seen, "last_seen": p.last_seen,
             "trusted": _compact(p.fingerprint) in self._trusted_keys, "was": self._was.get(p.sender_id)}
            for p in sorted(found, key=lambda p: p.first_seen)))

    def trust(self, argument: str) -> ev.AppEvent:
        """``/trust nick <fingerprint>``: the user compared ``nick``'s fingerprint with its holder."""
        nick, _, fp = argument.partition(" ")
        if not fp.strip():
            return ev.Error("usage: /trust nick <fingerprint> (read it to each other; see /whois nick)")
        nick, fp = nick.lstrip("@"), fp.strip()
        wanted = _compact(fp)
        match = [p for p in self._people.values() if p.nick == nick and _compact(p.fingerprint) == wanted]
        if not match:
            return ev.Error(f"nobody called {nick} has the fingerprint {fp}; see /whois {nick}")
        self._remember_trust(nick, wanted)
        self._flagged.discard(match[0].sender_id)
        self._verified.add(match[0].sender_id)  # the client learns it from Trusted
        return ev.Trusted(nick, match[0].fingerprint)

    def _remember_trust(self, nick: str, key: str) -> None:
        self.store.keys.set_trusted(nick, key)
        self._trust[nick] = key
        self._trusted_keys.add(key)


def _spaced(compact: str) -> str:
    return " ".join(compact[i:i + 4] for i in range(0, len(compact), 4))
