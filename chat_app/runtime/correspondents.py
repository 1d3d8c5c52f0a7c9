"""Whom we can write to directly: their two public keys, nick and address.

To seal to someone we need their X25519 key, which they publish in a signed
statement (``Kind.EXCHANGE_KEY``, ``chat_app.crypto.direct``). Every peer we
meet is sent ours, and a statement is answered with ours unless we sent it
to its author in the last ``STATEMENT_EVERY_MS``, so two peers exchange once,
not forever, and a lost answer is made good by the next statement. What we learn
is kept in the store (``direct`` table), so a restarted peer can still seal
to someone who is away.

Anyone can make keys, and every statement that verifies is someone we could
write to: so at most ``MAX_PERSONS`` are kept. Past it, the one we learned of
longest ago goes, unless we have a conversation with them (those are
bounded by ``Direct``); their key comes back with their next statement.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable, Container
from dataclasses import dataclass

from chat_app.crypto import EnvelopeError, Identity, Kind, Opened, exchange_key_statement, read_exchange_key, seal
from chat_app.crypto.sealed import open_sealed, seal_to
from chat_app.address import Address
from chat_app.runtime.mailbox import letter, mailbox_tag
from chat_app.store import Store

STATEMENT_EVERY_MS = 2_000
"""We answer someone's exchange-key statement with ours at most this often.
Statements go out on meeting, in answer, and when a sealed datagram came
from someone whose key we lack - so they are rare, and the answer should
not wait."""
MAX_PERSONS = 4_096
"""People whose keys we keep (in memory and in the ``direct`` table)."""


@dataclass
class Person:
    """Someone we can write to: their keys, nick, and where they were last."""

    peer_id: str
    signing_key: bytes
    exchange_key: bytes  # b"": not known yet
    nick: str | None = None
    address: Address | None = None
    last_heard: int | None = None


class Correspondents:
    def __init__(self, store: Store, identity: Identity, send: Callable[[bytes, Address], None],
                 people: Callable[[str], list[tuple[str, bytes]]], stats: Counter) -> None:
        self.store, self.identity, self.peer_id = store, identity, identity.sender_id
        self._send, self._people, self.stats = send, people, stats
        self.statement = exchange_key_statement(identity)
        self.persons: OrderedDict[str, Person] = OrderedDict()  # the one learned of longest ago first
        self._stated: dict[str, int] = {}  # peer -> when we last sent it our statement

    def __getitem__(self, peer_id: str) -> Person:
        return self.persons[peer_id]

    def get(self, peer_id: str) -> Person | None:
        return self.persons.get(peer_id)

    def add(self, person: Person) -> Person:
        return self.persons.setdefault(person.peer_id, person)

    def state_to(self, peer_id: str, addr: Address, now: int, force: bool = False) -> None:
        """Send ``peer_id`` our statement (unless sent lately and not ``force``)."""
        if force or now - self._stated.get(peer_id, -STATEMENT_EVERY_MS) >= STATEMENT_EVERY_MS:
            self._stated[peer_id] = now
            if len(self._stated) > MAX_PERSONS:
                self._stated = {p: t for p, t in self._stated.items() if now - t < STATEMENT_EVERY_MS}
            self._send(self.statement, addr)

    def learn(self, opened: Opened, addr: Address, now: int, keep: Container[str]) -> Person | None:
        """A statement that verified: its author's exchange key, and their
        person (``keep``: those we must not forget to make room, our
        conversations)."""
        try:
            exchange = read_exchange_key(opened)
        except EnvelopeError as exc:
            self.stats[f"dm_{exc.reason}"] += 1
            return None
        signer = opened.signer
        if signer.sender_id in self.persons:
            self.persons.move_to_end(signer.sender_id)
        else:
            self._make_room(keep)
        person = self.add(Person(signer.sender_id, signer.public_key, b""))
        changed = person.exchange_key != exchange
        person.exchange_key, person.address = exchange, addr
        if changed:
            self.stats["dm_keys_learned"] += 1
            self.store.direct.learn(person.peer_id, person.signing_key, exchange, person.nick)
        self.state_to(signer.sender_id, addr, now)
        return person

    def _make_room(self, keep: Container[str]) -> None:
        """At ``MAX_PERSONS``, forget the one learned of longest ago that is not in ``keep``."""
        if len(self.persons) < MAX_PERSONS:
            return
        oldest = next((peer_id for peer_id in self.persons if peer_id not in keep), None)
        if oldest is not None:
            del self.persons[oldest]
            self.store.direct.forget(oldest)
            self.stats["dm_persons_forgotten"] += 1

    def resolve(self, target: str) -> Person | str:
        """The one person ``target`` (an id or a nick) names, or why not."""
        if target in self.persons:
            return self.persons[target]
        known = {p.peer_id: p for p in self.persons.values() if p.nick == target}
        for sender_id, key in self._people(target):
            if sender_id not in known and sender_id != self.peer_id:
                known[sender_id] = self.persons.get(sender_id) or Person(sender_id, key, b"", target)
        if not known:
            return f"nobody called {target} is known here (see /peers, /whois)"
        if len(known) > 1:
            return f"{len(known)} people use the nick {target}: write to one by id (/whois {target})"
        person = self.add(next(iter(known.values())))
        person.nick = person.nick or target
        return person

    def unseal(self, opened: Opened, addr: Address | None, now: int) -> tuple[Person, bytes]:
        """The author of a sealed datagram and what it says, or
        ``EnvelopeError``: ``unknown_key`` if we lack their exchange key (then
        they are sent our statement, which brings theirs), or why it did not
        open. ``addr`` is where it came from (None: through a mailbox)."""
        signer = opened.signer
        person = self.persons.get(signer.sender_id)
        if person is None or not person.exchange_key or person.signing_key != signer.public_key:
            if addr is not None:
                self.state_to(signer.sender_id, addr, now, force=True)
            raise EnvelopeError("unknown_key", "a sealed datagram from someone whose exchange key we lack")
        plain = open_sealed(self.identity, person.signing_key, person.exchange_key, opened.payload)
        person.address = addr or person.address
        return person, plain

    def seal_and_send(self, person: Person, plaintext: bytes, address: Address | None) -> None:
        """Seal ``plaintext`` to ``person`` (a new ephemeral key each time),
        sign it and send it to ``address``. Without their exchange key nothing
        can be sealed: our statement goes instead, and they answer with theirs."""
        if not person.exchange_key:
            self.stats["dm_no_key"] += 1
            if address is not None:
                self.state_to(person.peer_id, address, 0, force=True)
            return
        if address is None:
            self.stats["dm_no_address"] += 1
            return
        self._send(self._sealed(person, plaintext), address)
        self.stats["dm_datagrams_out"] += 1

    def deposit(self, person: Person, plaintext: bytes, mailboxes: list[Address]) -> None:
        """Seal ``plaintext`` (their letter) to ``person`` and hand it to each
        of ``mailboxes``, filed under their tag: one envelope, so one receipt
        from them clears it everywhere (``mailbox.taken``)."""
        if person.exchange_key and mailboxes:
            held = letter(mailbox_tag(person.signing_key), self._sealed(person, plaintext))
            for mailbox in mailboxes:
                self._send(held, mailbox)
            self.stats["dm_letters_out"] += len(mailboxes)

    def _sealed(self, person: Person, plaintext: bytes) -> bytes:
        sealed = seal_to(self.identity, person.signing_key, person.exchange_key, plaintext)
        return seal(self.identity, Kind.MVDS, sealed)
