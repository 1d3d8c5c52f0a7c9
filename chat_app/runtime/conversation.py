"""One SDS channel's conversation: its engine, its slice of the store, and
its part of the step every input ends with (``chat_app.runtime.step``).

Draining the engine translates its events (no side effects); the commit
stores the delivered messages and what changed in the engine state
(``take_changes``: never the whole of it) in one transaction; a rollback
reloads the engine as the store has it and holds again what the step had
released.

Backpressure: past capacity, acknowledgements come back late and our own
unacknowledged messages pile up, each one resent. So at most
``MAX_IN_FLIGHT`` of our messages sent in the last ``IN_FLIGHT_WINDOW_MS``
may be unseen - held by no peer as far as we know; what the user says beyond that is *held* here, in
order, and handed to the engine at the start of a later step, as
acknowledgements free room (a message older than the window stops counting,
so a peer whose peers fell silent still sends, only slower). Backpressure is
against peers that exist: with nobody heard from lately there is nobody to
acknowledge and nobody to overwhelm, so nothing is held (3,000 pasted lines
leave at once, not at 25 a second). Leaving the channel sends everything
held, so nothing typed is lost.

Gaps in an author's sequence numbers: every chat payload carries its
author's number in the channel, so a delivered message numbered n from an
author whose latest here is below n - 1 says that messages are missing even
when nothing names them (SDS names only a few recent ids in each causal
history). The step reports such gaps (``seq_gaps``) and the runtime catches
up by replication, which fetches by author and height.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.payload import Payload, PayloadError
from chat_app.runtime.envelopes import sds_bytes
from chat_app.runtime.step import Step
from chat_app.runtime.translate import translate
from chat_app.store import Store, retrieval_hint
from sync.sds import Channel, Config, LocalProtocolError

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 256
IN_FLIGHT_WINDOW_MS = 10_000
RETRY_MS = 1_000
AUTHORS_REMEMBERED = 1024
"""Authors whose latest sequence number is kept in memory (anyone can make
up authors: the least recently heard is read from the store again)."""


def retrieval_hint_of(message_id: str, sender_id: str, content: bytes, decoded: object) -> bytes | None:
    """The hint a delivered message is cited with: its author's sequence
    number, from the payload routing decoded (read again only after a restore)."""
    payload = decoded if isinstance(decoded, Payload) else Payload.try_decode(content)
    return retrieval_hint(payload.seq) if payload else None


class Conversation:
    protocol = "sds"

    def __init__(self, channel: str, store: Store, peer_id: str, config: Config, now: int,
                 stored_wire: Callable[[str, bytes, str], bytes] | None = None) -> None:
        self.channel = channel
        self.name = f"#{channel}"
        self.stored_wire = stored_wire  # channel, SDS bytes, sender -> what the store keeps (the envelope)
        self.store = store
        self.peer_id = peer_id
        self.config = config
        self.engine = self._load(now)
        self.seq = store.last_seq(channel, peer_id)  # our last per-author sequence number here
        self._latest: Latest[str, int] = Latest(AUTHORS_REMEMBERED)  # author -> the highest seq delivered here
        self.topic_id: str | None = None  # the topic message last reported
        self.held: deque[Payload] = deque()  # checked, numbered when they go
        self.retry_at: int | None = None  # while messages are held: when to look for room again

    def _load(self, now: int) -> Channel:
        """The engine as the store last committed it. Its state is saved
        whole once here (a new channel, a rollback, an older database's
        layout), and from then on each step stores only what it changed."""
        state = self.store.states.load(self.channel)
        if state is None:
            engine = Channel(self.channel, self.peer_id, now, self.config, retrieval_hint_of)
        else:
            log_rows = ((lamport, mid, sender, hint, sds_bytes(wire))  # the engine speaks SDS, not envelopes
                        for lamport, mid, sender, hint, wire in self.store.log_rows(self.channel))
            engine = Channel.restore(state, self.config, retrieval_hint_of, log=log_rows)
        # export_state also starts the round that take_changes() reports on
        self.store.states.save(self.channel, engine.export_state(include_log=False))
        return engine

    def send(self, nick: str, text: str, kind: str, now: int, about: str = "") -> str | None:
        """Queue a chat message: its id, or None if it is held for later
        (see the module's note on backpressure). Raises PayloadError (checked
        here, once: a bad message is refused now, not when it leaves) or
        LocalProtocolError."""
        payload = Payload(kind, nick, text, self.seq + 1, now, about)
        if self.held or not self._room(now):
            self.held.append(payload)
            self.retry_at = now + RETRY_MS
            return None
        return self._send(payload, now)

    def _send(self, payload: Payload, now: int) -> str:
        payload = payload.numbered(self.seq + 1)  # one held back takes its number when it goes
        message_id = self.engine.send(payload.encode(), now, decoded=payload)
        self.seq += 1
        return message_id

    def _room(self, now: int) -> bool:
        return not self.engine.participants or \
            self.engine.in_flight(now - IN_FLIGHT_WINDOW_MS, MAX_IN_FLIGHT) < MAX_IN_FLIGHT

    def _release(self, now: int, everything: bool) -> list[Payload]:
        """Hand held messages to the engine while there is room (all of them
        if ``everything``); those that went."""
        released = []
        while self.held and (everything or self._room(now)):
            payload = self.held.popleft()
            try:
                self._send(payload, now)
            except (PayloadError, LocalProtocolError) as exc:
                log.debug("#%s: a held message could not be sent: %s", self.channel, exc)
                continue
            released.append(payload)
        self.retry_at = now + RETRY_MS if self.held else None
        return released

    def send_ephemeral(self, payload: Payload, now: int) -> None:
        self.engine.send_ephemeral(payload.encode(), now)

    def seal(self, envelopes, data: bytes, wire_of: Callable[[str], bytes | None]) -> bytes | None:
        """The datagram to send for what the engine produced (see ``Envelopes.seal_sds``)."""
        return envelopes.seal_sds(self.channel, data, wire_of)

    def drain(self, now: int, release_all: bool = False) -> Step:
        released = self._release(now, release_all)
        translation = translate(self.channel, self.engine.events(), now, self.stored_wire)
        return Step(translation, self.engine.datagrams_to_send(now), self.engine.take_changes(), released)

    def commit(self, step: Step, now: int) -> None:
        self.store.commit_step(self.channel, step.state, step.translation.rows, now, step.translation.acks)

    def settle(self, step: Step) -> None:
        translation = step.translation
        if any(row.kind == "topic" for row in translation.rows):
            translation.events += self.topic_changes()
        translation.seq_gaps = self._seq_gaps(translation.rows)

    def _seq_gaps(self, rows) -> list[tuple[str, int, int]]:
        """(author, first, last): numbers skipped before the delivered ``rows``
        (just committed) - what no causal history named may still be missing."""
        gaps = []
        for row in sorted((r for r in rows if r.seq is not None and not r.own), key=lambda r: r.seq):
            latest = self._latest.get(row.sender_id)
            if latest is None:  # the row is in the store by now: the latest before it is the one below it
                latest = self.store.last_seq(self.channel, row.sender_id, below=row.seq)
            if row.seq > latest + 1:
                gaps.append((row.sender_id, latest + 1, row.seq - 1))
            self._latest.put(row.sender_id, max(latest, row.seq))
        return gaps

    def topic_changes(self, always: bool = False) -> list[ev.TopicChanged]:
        """The topic, if it changed since last reported (or ``always``). A
        topic set earlier in the log that arrives late changes nothing."""
        latest = self.store.topic(self.channel)
        if latest is None or (latest.message_id == self.topic_id and not always):
            return []
        self.topic_id = latest.message_id
        return [ev.TopicChanged(self.channel, latest.text or "", latest.nick, latest.message_id)]

    def rollback(self, now: int, step: Step | None = None) -> None:
        self.engine = self._load(now)
        self.seq = self.store.last_seq(self.channel, self.peer_id)
        self._latest.clear()
        if step is not None:
            self.held.extendleft(reversed(step.released))  # they go with a later step


__all__ = ["Conversation", "PayloadError", "LocalProtocolError"]
