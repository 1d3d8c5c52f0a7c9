"""Direct messages: one MVDS engine per conversation, sealed end to end.

Theory of operation
-------------------

A direct conversation is between us and one other identity. Its group id
is the SHA-256 of both Ed25519 keys, sorted, so both sides compute the same
one; its name in the store and the user interface is ``@`` and their sender
id, and its messages go to the ``messages`` table like a channel's.

Keys. To seal to someone we need their X25519 key, from their signed
statement; ``correspondents`` keeps who we know and sends ours.

Sending. ``send`` hands the body (the same CBOR payload as in channels) to
the conversation's ``MvdsNode``, stores our message as sent, and steps.
Every datagram the engine produces is sealed to the other person
(``chat_app.crypto.sealed``: an ephemeral key per datagram) and signed in an
envelope of kind MVDS. Until we hold their exchange key the datagram is not
sent - our statement goes instead, they answer with theirs, and the engine's
retransmission brings the message.

Receiving. The envelope's signature was checked before we are called; the
datagram is opened with the signer's exchange key (an unknown signer is
counted and sent our statement), and only then does the engine see it.

The step is a channel's (``chat_app.runtime.step``): drain the engine's
events into rows and app events, commit the rows, the acknowledgements and
the engine's exported state in one transaction, and only then send. So a
restart resumes every retransmission where it stood, and a message
delivered is stored exactly once.

A peer that was silent for ``COMEBACK_MS`` and is heard from again (any
datagram, or an mDNS announcement) has its backoff reset: what waits for it
goes at once.

Mailboxes (``mailbox``). Whenever the engine says the other person probably
will not get what it sends live (``MvdsNode.letter_due``: a message
unacknowledged for 3 s, or they are silent for 30 s, or acks of their
letters are owed), a step that sends them something, or stores a message
of ours, also hands every mailbox their letter - every message they have
not acknowledged, in batch mode - and so does leaving; once they have
acknowledged all of it, the mailboxes are told to forget it. A letter a
mailbox hands us goes to the engine as a letter (``receive(letter=True)``:
no sign that its author is there), and once stored, or never to be opened,
every mailbox is told to forget it. We ask a mailbox for our letters when
we hear it for the first time, or again after a silence.

Anyone can make keys: the conversations others open and we never wrote in
are bounded (``MAX_UNANSWERED``), as are the keys we keep
(``correspondents.MAX_PERSONS``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable

import cbor2

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.crypto import EnvelopeError, Identity, Kind, Opened
from chat_app.address import Address
from chat_app.channel_names import BadChannelName, channel_spec
from chat_app.payload import ABOUT_KINDS, Payload, PayloadError
from chat_app.runtime.correspondents import Correspondents, Person
from chat_app.runtime import mailbox
from chat_app.runtime.step import Step, StepFailed, run_step
from chat_app.runtime.translate import Translation
from chat_app.runtime.typing_indicator import TypingIndicator
from chat_app.store import Store, StoredMessage
from sync.mvds import Config, DmAcknowledged, DmDelivered, LocalProtocolError, MvdsNode, Rejected

MVDS_PAYLOAD, TYPING, LETTER, INVITE = 0, 1, 2, 3
"""The first byte of a sealed plaintext: what follows (a letter is an MVDS
payload left with a mailbox: however it arrives, it is no sign of life; an
invitation holds a private channel's secret, so it is never an MVDS message,
which would be stored and exported)."""
INVITATIONS_KEPT = 16
"""Invitations kept until the user joins (anyone may send them): past it, the oldest goes."""
COMEBACK_MS = Config().comeback_after_ms
DIRECT_KINDS = ("text", "me", "file", *ABOUT_KINDS)
"""What a direct message may be: text, an action, a file offer, or a reply, reaction, edit or deletion of one."""
MAX_UNANSWERED = 256
"""Conversations others opened and we never wrote in, kept open at once: past
it, the one idle longest is closed (its history stays)."""


def group_id(key_a: bytes, key_b: bytes) -> bytes:
    """A conversation's MVDS group id: the same on both sides."""
    first, second = sorted((key_a, key_b))
    return hashlib.sha256(b"sds-chat direct\x00" + first + second).digest()


def channel_of(peer_id: str) -> str:
    return f"@{peer_id}"


class DirectConversation:
    """One direct conversation: its MVDS engine, and its part of the step."""

    def __init__(self, person: Person, engine: MvdsNode, group: bytes, store: Store, our_id: str,
                 config: Config, stats: Counter) -> None:
        self.person = person
        self.engine = engine
        self.group = group
        self.store, self.our_id, self.config, self.stats = store, our_id, config, stats
        self.seq = store.last_seq(self.channel, our_id)  # our last per-author sequence number (0: we never wrote)
        self.sent: list[StoredMessage] = []  # our messages since the last step
        self.active_at = 0  # when it last took a step
        self.deposited = engine.letter(person.peer_id) is not None  # a mailbox may hold a letter of ours to them

    @property
    def channel(self) -> str:
        return channel_of(self.person.peer_id)

    @property
    def name(self) -> str:
        return self.channel

    def drain(self, now: int, release_all: bool = False) -> Step:
        translation = translate(self, self.engine.events(), now, self.stats)
        translation.rows[:0], self.sent = self.sent, []
        for row in translation.rows:
            if not row.own:
                self.person.nick = row.nick  # stored with the step
        return Step(translation, self.engine.datagrams_to_send(now), self.engine.export_state())

    def commit(self, step: Step, now: int) -> None:
        person = self.person
        self.store.direct.commit(person.peer_id, step.state, [r.row() for r in step.translation.rows],
                                 step.translation.acks, person.address, person.nick, now)

    def rollback(self, now: int, step: Step | None = None) -> None:
        self.stats["dm_step_failed"] += 1
        state = next((row.state for row in self.store.direct.peers() if row.peer_id == self.person.peer_id), None)
        self.engine = MvdsNode(now, self.config) if state is None else MvdsNode.restore(state, self.config)
        self.seq = self.store.last_seq(self.channel, self.our_id)

    def settle(self, step: Step) -> None:
        pass


class Direct:
    def __init__(self, store: Store, identity: Identity, typing_state: TypingIndicator, *,
                 send: Callable[[bytes, Address], None], notify: Callable[[ev.AppEvent], None],
                 people: Callable[[str], list[tuple[str, bytes]]], address_of: Callable[[str], Address | None],
                 mailboxes: Callable[[], list[Address]] = list, config: Config | None = None) -> None:
        self.store, self.identity, self.typing_state = store, identity, typing_state
        self.peer_id = identity.sender_id
        self._send, self._notify, self._address_of = send, notify, address_of
        self._mailboxes = mailboxes  # store peers that keep letters for those away (``mailbox``)
        self._collected: dict[Address, int] = {}  # mailbox -> when we last asked it for our letters
        self.mailbox_tag = mailbox.mailbox_tag(identity.public_key)
        self.mailbox_link = f"~{self.mailbox_tag.hex()}"  # announced: where letters for us are filed
        self.config = config or Config()
        self.stats: Counter[str] = Counter()
        self.persons = Correspondents(store, identity, send, people, self.stats)
        self.statement = self.persons.statement
        self.conversations: dict[str, DirectConversation] = {}
        self.invitations: Latest[str, bytes] = Latest(INVITATIONS_KEPT)  # channel -> its secret, until joined
        for row in store.direct.peers():
            person = self.persons.add(Person(row.peer_id, row.signing_key, row.exchange_key, row.nick, row.address))
            if row.state is not None:
                self.conversations[row.peer_id] = self._conversation(person, MvdsNode.restore(row.state, self.config))

    def _conversation(self, person: Person, engine: MvdsNode) -> DirectConversation:
        return DirectConversation(person, engine, group_id(self.identity.public_key, person.signing_key),
                                  self.store, self.peer_id, self.config, self.stats)

    # ---------------------------------------------------------------- commands

    def start(self, now: int) -> None:
        """Restored conversations may have datagrams due (a restart mid-retransmission)."""
        for conversation in self.conversations.values():
            self._step(conversation, now)

    def open(self, target: str, now: int, announce: bool = True) -> DirectConversation | None:
        """The conversation with ``target`` (a nick, ``@id`` or an id), opened
        if new; ``announce``: the user asked for it (``/query``), so say so."""
        person = self.persons.resolve(target.strip().lstrip("@"))
        if isinstance(person, str):
            return self._error(person)
        conversation = self.conversations.get(person.peer_id)
        if conversation is None:
            engine = MvdsNode(now, self.config)
            if person.last_heard is not None:  # heard from before: the engine knows whether they are there
                engine.peer_seen(person.peer_id, person.last_heard)
            conversation = self.conversations[person.peer_id] = self._conversation(person, engine)
            self.store.direct.learn(person.peer_id, person.signing_key, person.exchange_key, person.nick)
            self._step(conversation, now)
        if announce:
            self._notify(ev.DmOpened(conversation.channel, person.peer_id, person.nick))
        return conversation

    def send(self, target: str, text: str, kind: str, nick: str, now: int, about: str = "") -> str | None:
        """Send ``text`` to ``target``; the message id (hex), or None and an error event."""
        if target.startswith("@") and target[1:] in self.conversations:
            conversation = self.conversations[target[1:]]
        else:
            conversation = self.open(target, now, announce=False)
        if conversation is None:
            return None
        try:
            payload = Payload(kind, nick, text, conversation.seq + 1, now, about)
            mid = conversation.engine.send(conversation.person.peer_id, conversation.group, payload.encode(), now)
        except (PayloadError, LocalProtocolError) as exc:
            return self._error(str(exc))
        conversation.seq += 1
        stamp = conversation.engine.last_timestamp(conversation.group)
        conversation.sent.append(stored(conversation, mid, self.peer_id, payload, stamp, now, own=True))
        return mid.hex() if self._step(conversation, now) else None

    def invite(self, target: str, channel: str, secret: bytes, now: int) -> None:
        """Hand ``target`` the secret of the private channel ``channel``,
        sealed to them alone; they join it only if they choose to."""
        conversation = self.open(target, now, announce=False)
        if conversation is None:
            return
        person = conversation.person
        if not person.exchange_key:  # sealing is not possible yet: our statement brings theirs
            if (address := person.address or self._address_of(person.peer_id)) is not None:
                self.persons.state_to(person.peer_id, address, now, force=True)
            return self._error(f"no key of {person.nick or person.peer_id} yet to seal the invitation to: "
                               f"/invite again in a moment")
        self._seal_and_send(conversation, bytes((INVITE,)) + cbor2.dumps({"channel": channel, "secret": secret}))
        self._notify(ev.InviteSent(channel, person.peer_id, person.nick))

    def _invited(self, person: Person, body: bytes) -> None:
        try:
            invitation = cbor2.loads(body)
            channel, secret = invitation["channel"], invitation["secret"]
            if not (isinstance(channel, str) and isinstance(secret, bytes) and len(secret) == 32):
                raise ValueError("not a channel name and a 32-byte secret")
            if channel_spec(channel)[0] != channel:
                raise ValueError("not a channel name")
        except (cbor2.CBORDecodeError, ValueError, TypeError, KeyError, BadChannelName) as exc:
            self.stats["dm_bad_invite"] += 1
            return self._notify(ev.DatagramRejected("invite", f"an invitation from {person.peer_id[:12]} "
                                                              f"is malformed ({exc.__class__.__name__})"))
        self.invitations.put(channel, secret)
        self._notify(ev.Invited(channel, person.peer_id, person.nick))

    def typing(self, channel: str, nick: str, now: int) -> None:
        conversation = self.conversations.get(channel.removeprefix("@"))
        if conversation is not None and self.typing_state.should_send(channel, now):
            self._seal_and_send(conversation, bytes((TYPING,)) + Payload("typing", nick, sent_at=now).encode())

    # ------------------------------------------------------------------- input

    def received(self, opened: Opened, addr: Address, now: int) -> None:
        """A verified envelope of kind MVDS or EXCHANGE_KEY from ``addr``."""
        if opened.kind is not Kind.EXCHANGE_KEY:
            self._open(opened, addr, now)
        elif (person := self.persons.learn(opened, addr, now, keep=self.conversations)) is not None:
            if person.last_heard is None:  # its key came first: ``heard`` did not know it yet
                person.last_heard = now
                self._collect(addr, now)
            # we have their key now, or they lacked ours and could not read what we sent: resend now
            self._comeback(person.peer_id, now)

    def _open(self, opened: Opened, addr: Address | None, now: int) -> bool:
        """Open a sealed datagram from ``addr`` (None: a letter a mailbox
        handed us) and take it. Whether we are done with it - taken, or never
        to be opened - rather than unable to yet (their key unknown, a failed step)."""
        try:
            person, plain = self.persons.unseal(opened, addr, now)
        except EnvelopeError as exc:
            self.stats[f"dm_{exc.reason}"] += 1
            if exc.reason != "unknown_key":
                self._notify(ev.DatagramRejected(exc.reason, str(exc)))
            return exc.reason != "unknown_key"
        if plain[:1] == bytes((INVITE,)):
            self._invited(person, plain[1:])
        elif plain[:1] == bytes((TYPING,)):
            typing = typing_from(self.typing_state, person, plain[1:], now, self.stats)
            if typing is not None:
                self._notify(typing)
        elif plain[:1] in (bytes((MVDS_PAYLOAD,)), bytes((LETTER,))):
            conversation = self.conversations.get(person.peer_id) or self._opened_by(person, now)
            letter = addr is None or plain[:1] == bytes((LETTER,))
            conversation.engine.receive(plain[1:], now, source=person.peer_id, letter=letter)
            return self._step(conversation, now)
        else:
            self.stats["dm_unknown_type"] += 1
        return True

    def _opened_by(self, person: Person, now: int) -> DirectConversation:
        """The conversation ``person`` opens with us. Past ``MAX_UNANSWERED``
        of those we never wrote in, the one idle longest is closed first."""
        unanswered = [c for c in self.conversations.values() if not c.seq]
        if len(unanswered) >= MAX_UNANSWERED:
            idle = min(unanswered, key=lambda c: c.active_at)
            del self.conversations[idle.person.peer_id]
            self.store.direct.close(idle.person.peer_id)
            self.stats["dm_closed_idle"] += 1
        return self.open(person.peer_id, now, announce=False)

    def letter_for_us(self, data: bytes) -> bytes | None:
        """The envelope inside ``data`` if it is a letter a mailbox kept for us."""
        return mailbox.opened_letter(data, self.mailbox_tag)

    def from_mailbox(self, opened: Opened | object, now: int) -> None:
        """A letter a mailbox handed us, its envelope verified (or refused):
        its author wrote it, but it says nothing of where the author is. Once
        we are done with it, every mailbox may forget it."""
        if not isinstance(opened, Opened) or opened.kind is not Kind.MVDS:
            self.stats["dm_bad_letter"] += 1
            return
        self.stats["dm_from_mailbox"] += 1
        if self._open(opened, None, now):
            receipt = mailbox.taken(self.identity, opened)
            for address in self._mailboxes():
                self._send(receipt, address)

    def _collect(self, addr: Address | None, now: int) -> None:
        """``addr`` was silent, is new to us, or announced itself a mailbox:
        if it is one, ask it for our letters - once for all of these at one
        time (its datagrams may come before its announcement says what it is)."""
        if addr is None or now - self._collected.get(addr, -COMEBACK_MS) < COMEBACK_MS or addr not in self._mailboxes():
            return
        self._collected = {a: at for a, at in self._collected.items() if now - at < COMEBACK_MS}
        self._collected[addr] = now
        self.stats["dm_collect"] += 1
        self._send(mailbox.collect(self.identity, now), addr)

    def mailbox_announced(self, addr: Address, now: int) -> None:
        """A mailbox store announced itself at ``addr``: our letters, unless just asked for."""
        self._collect(addr, now)

    def leave(self) -> None:
        """We are going, perhaps before those we wrote to come back: each gets
        its letter in the mailboxes, of whatever waits for it."""
        for conversation in self.conversations.values():
            self._deposit(conversation)

    def heard(self, peer_id: str, addr: Address | None, now: int) -> None:
        """A sign of life from ``peer_id`` (any datagram, or mDNS): where it
        is, and that it is there - so its engine sends it batch, one hop,
        rather than offers, three; and, back after a silence, a backoff reset
        so what waits for it goes at once (and, from a mailbox, our letters)."""
        person = self.persons.get(peer_id)
        if person is None:
            return
        if addr is not None:
            person.address = addr
        back = person.last_heard is None or now - person.last_heard >= COMEBACK_MS
        person.last_heard = now
        if back:
            self._collect(addr, now)
        conversation = self.conversations.get(peer_id)
        if conversation is not None and (back or not conversation.engine.waiting(peer_id)):
            self._comeback(peer_id, now)  # with nothing waiting, this only tells the engine it is there

    def _comeback(self, peer_id: str, now: int) -> None:
        conversation = self.conversations.get(peer_id)
        if conversation is None:
            return
        waiting = conversation.engine.waiting(peer_id)
        conversation.engine.peer_seen(peer_id, now)
        if waiting:
            self.stats["comeback"] += 1
            self._step(conversation, now)

    # -------------------------------------------------------------------- time

    def get_timer(self) -> int | None:
        deadlines = [d for c in self.conversations.values() if (d := c.engine.get_timer()) is not None]
        return min(deadlines, default=None)

    def handle_timer(self, now: int) -> None:
        for conversation in self.conversations.values():
            deadline = conversation.engine.get_timer()
            if deadline is not None and deadline <= now:
                conversation.engine.handle_timer(now)
                self._step(conversation, now)

    # ---------------------------------------------------------------- the step

    def _step(self, conversation: DirectConversation, now: int) -> bool:
        """Drain, commit, then send and notify; False if the commit failed (and the step was undone)."""
        person = conversation.person
        conversation.active_at = now
        wrote = bool(conversation.sent)
        try:
            step = run_step(conversation, now)
        except StepFailed as exc:  # a full disk, say: nothing of the step leaves
            self._notify(ev.Error(f"direct message to {person.nick or person.peer_id}: could not store a step "
                                  f"({exc}); it was undone"))
            return False
        rows, datagrams = step.translation.rows, step.datagrams
        for row in rows:
            if not row.own:
                self.typing_state.message_from(conversation.channel, person.peer_id)
        for out in datagrams:
            self._seal_and_send(conversation, bytes((MVDS_PAYLOAD,)) + out.data)
        engine = conversation.engine
        if (datagrams or wrote) and engine.letter_due(person.peer_id, now):
            self._deposit(conversation)
        elif conversation.deposited and engine.letter(person.peer_id) is None:
            self._withdraw(conversation)
        for row in rows:
            self._notify(ev.DmDelivered(row.channel, person.peer_id, person.nick, row.message_id, row.sender_id,
                                        row.lamport, row.nick, row.kind, row.text, row.sent_at, row.own, row.about,
                                        row.offer))
        for event in step.translation.events:
            self._notify(event)
        return True

    # --------------------------------------------------------------- sealing

    def _seal_and_send(self, conversation: DirectConversation, plaintext: bytes) -> None:
        person = conversation.person
        self.persons.seal_and_send(person, plaintext, person.address or self._address_of(person.peer_id))

    def _deposit(self, conversation: DirectConversation) -> None:
        """Hand every mailbox the other person's letter (``sync.mvds.letters``), if there is anything to carry."""
        mailboxes = self._mailboxes()
        held = conversation.engine.letter(conversation.person.peer_id) if mailboxes else None
        if held is not None:
            self.persons.deposit(conversation.person, bytes((LETTER,)) + held, mailboxes)
            conversation.deposited = True

    def _withdraw(self, conversation: DirectConversation) -> None:
        """They acknowledged everything our letter held: no mailbox need keep it."""
        request = mailbox.withdraw(self.identity, conversation.person.signing_key)
        for address in self._mailboxes():
            self._send(request, address)
        conversation.deposited = False
        self.stats["dm_letters_withdrawn"] += 1

    def _error(self, reason: str) -> None:
        self._notify(ev.Error(reason))
        return None


def typing_from(typing_state: TypingIndicator, person: Person, body: bytes, now: int,
                stats: Counter) -> ev.AppEvent | None:
    """A typing notice from ``person``: the event to report, if any."""
    payload = Payload.try_decode(body)
    if payload is None or payload.kind != "typing":
        stats["dm_undecodable"] += 1
        return None
    return typing_state.seen(channel_of(person.peer_id), person.peer_id, payload.nick, now)


def translate(conversation: DirectConversation, engine_events, now: int, stats: Counter) -> Translation:
    """The engine's events as rows to store, acknowledgements to record and
    events to report (no side effects but counting what is refused)."""
    out = Translation()
    rows, acks, events = out.rows, out.acks, out.events
    peer_id = conversation.person.peer_id
    for event in engine_events:
        if isinstance(event, DmDelivered):
            payload = Payload.try_decode(event.body)
            if event.group_id != conversation.group:
                stats["dm_wrong_group"] += 1
            elif payload is None or payload.kind not in DIRECT_KINDS:
                stats["dm_undecodable"] += 1
                events.append(ev.DatagramRejected("payload", f"a direct message from {peer_id[:12]} is no valid text "
                                                             "(undecodable, or a nick or text the wire rule refuses)"))
            else:
                rows.append(stored(conversation, event.message_id, peer_id, payload, event.timestamp, now, own=False))
        elif isinstance(event, DmAcknowledged):
            acks.append((event.message_id.hex(), "acknowledged", 1))
            events.append(ev.DmAcknowledged(conversation.channel, peer_id, event.message_id.hex()))
        elif isinstance(event, Rejected):
            stats[f"dm_{event.kind}"] += 1
    return out


def stored(conversation: DirectConversation, mid: bytes, sender: str, payload: Payload, stamp: int, now: int,
           own: bool) -> StoredMessage:
    """A message as stored: its MVDS timestamp orders the conversation, as a lamport orders a channel."""
    return StoredMessage(conversation.channel, mid.hex(), stamp, sender, payload.nick, payload.kind,
                         payload.text, payload.seq, payload.sent_at, payload.encode(), now, now, own,
                         ack="unacknowledged" if own else None, about=payload.about or None,
                         offer=payload.offer)
