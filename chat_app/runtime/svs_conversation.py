"""One SVS channel's conversation: the surface of ``Conversation``, over
State Vector Sync.

What travels: each chat message is one SVS publication whose content is
its author's signed envelope of a *chat record* - an SDS message with
sender, id, channel, Lamport timestamp and the chat payload, and no causal
history or bloom filter. So an SVS channel keeps the same log as an SDS one
(ordered by Lamport timestamp, then message id), stores the same rows and
envelopes, and replication, export and ``verify`` read it alike; and a
publication fetched from any member still verifies as its author's.

The payload's per-author sequence number *is* the SVS sequence number of
the publication: the author's engine numbers it, the routing refuses a
record whose number differs, and the step commits the engine state (its
vector, so its own number) with the message before any datagram leaves -
a restart never reuses a number.

The member's state is saved with a step that stores messages or
acknowledgements or that grew the vector (so our own number is stored
before a publication leaves); the rest of it - timers, fetches in flight,
which members hold what - changes with nearly every datagram, and a restart
that loses it learns it again from the next vectors. (Saving it at every
datagram was most of the cost of a 100-member group.)

Each author's messages are stored in sequence order: SVS delivers them so,
and what replication brings (possibly past a hole of the serving peer) waits
here until the messages before it are stored. A replicated message also
tells the SVS member it need not fetch it (``delivered_elsewhere``).

Publications a vector shows and we lack are fetched by the SVS member (that
is how every publication arrives); those still missing ``GAP_GRACE_MS``
later - counted from when our own input was last behind, since till then
the answers may be queued, unread - are reported as gaps in their author's
numbers (``seq_gaps``), so the runtime catches up by replication as for an
SDS channel: over TCP, which the loss that took the publications or the
fetches does not touch. At 50% loss the member's fetches alone left half
the messages 13 s late (simulator, 5 members); with replication, about 1 s.

SVS has no acknowledgements, but every member's vector carries our own
entry: a member whose vector shows our number n has heard of our message n
and holds it or fetches it until it does. Our message then shows as
possibly received by that many members (◐ n, "possibly_acknowledged", via
"state_vector") - not ● acknowledged, which in an SDS channel means a peer
*delivered* it: a vector says nothing of whether the fetch is done yet.
Nothing is held back: there is nothing to wait for, so there is no
backpressure (``held`` stays empty).
"""

from __future__ import annotations

import logging
from collections import deque

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.crypto import Kind
from chat_app.crypto.envelope import VERSION
from chat_app.payload import Payload
from chat_app.runtime.conversation import Conversation
from chat_app.runtime.envelopes import Envelopes, is_envelope, sds_bytes
from chat_app.runtime.fetching import Backlog
from chat_app.runtime.routing import Refused
from chat_app.runtime.svs_engine import CONFIG, SvsEngine, is_svs_packet
from chat_app.runtime.step import Step
from chat_app.runtime.svs_routing import group_name, node_name, sender_of
from chat_app.runtime.translate import Translation, translate
from chat_app.store import Store, StoredMessage
from proto.sds_pb2 import SdsMessage
from sync.sds.ids import compute_message_id
from sync.sds.wire import Checked
from sync.svs import Channel, DataWanted, Delivered, Known, Missing, Rejected

log = logging.getLogger(__name__)

_PRIVATE_RECORD = bytes((VERSION, Kind.PRIVATE))
PENDING = 4096
"""Replicated messages kept waiting for an earlier one of their author, all
authors together (anyone may make keys, and sign messages 2, 3 ... of each)."""

GAP_GRACE_MS = 1_000
"""How long the SVS member may fetch what a vector showed before the runtime
catches up by replication too. Every publication is fetched after a vector
shows it, in milliseconds on a LAN: replicating at once replicated for every
message, which cost 40% more bytes with no loss at all."""
GAP_GRACE_MAX_MS = 30_000
"""``GAP_GRACE_MS`` counts from when our own input was last behind
(``fetching.Backlog``): till then what the member fetched is most likely
queued, unread. With 20 real members on 2 cores, reading most datagrams in
batches of 128-512 seconds late, a 1 s grace ran out for two publications in
three, and the replications with every member brought each message nine
times, adding to the very load that held them up. At most this long
however far behind we are - a replication round's interval
(``catchup.ROUND_EVERY_MS``): a flood that keeps us behind does not stop
catching up."""
GAPS_KEPT = 1024
"""Authors whose missing publications are watched (anyone may make keys)."""
OWN_IDS_KEPT = 1024
"""Our latest messages' ids, by sequence number, for the vectors that show
them (older ones are read from the store)."""


class SvsConversation:
    protocol = "svs"

    def __init__(self, channel: str, store: Store, envelopes: Envelopes, backlog: Backlog, now: int) -> None:
        self.channel = channel
        self.backlog = backlog
        self.name = f"#{channel}"
        self.store = store
        self.envelopes = envelopes
        self.peer_id = envelopes.peer_id
        self.held: deque = deque()  # never used: nothing waits for acknowledgements
        self.retry_at: int | None = None
        self.topic_id: str | None = None
        self.engine = self._load(now)
        self._count_from_store()

    def _load(self, now: int) -> SvsEngine:
        state = self.store.states.load(self.channel)
        if state is not None and state.get("svs") is not None:
            member = Channel.restore(state["svs"], CONFIG)
        else:
            group = group_name(self.envelopes.link_name(self.channel))
            member = Channel(group, node_name(self.peer_id), now, CONFIG)
        self.store.states.save(self.channel, {"svs": _saved(member)})
        self._saved_version = member.vector_version
        return SvsEngine(member, self.channel, self.peer_id, self._last, self.backlog)

    def _count_from_store(self) -> None:
        self._last_seq: dict[str, int] = {}  # author -> its last stored sequence number (read on first use)
        self._pending: dict[str, dict[int, StoredMessage]] = {}
        self._waiting = 0  # how many ``_pending`` holds
        self._own_ids: Latest[int, str] = Latest(OWN_IDS_KEPT)  # our latest messages: seq -> message id
        self._gaps: Latest[str, tuple[int, int]] = Latest(GAPS_KEPT)  # author -> (highest missing, since when)
        last = self.store.messages(self.channel, limit=1)
        self.lamport = last[0].lamport if last else 0
        self.length = self.store.count(self.channel)

    # ------------------------------------------------------------ commands

    def send(self, nick: str, text: str, kind: str, now: int, about: str = "") -> str:
        """Publish a chat message: its id. Raises PayloadError or LocalProtocolError."""
        content = Payload(kind, nick, text, self.engine.member.seq + 1, now, about).encode()
        lamport = max(now, self.lamport + 1)
        message_id = compute_message_id(self.peer_id, self.channel, lamport, content)
        record = SdsMessage(sender_id=self.peer_id, message_id=message_id, channel_id=self.channel,
                            lamport_timestamp=lamport, content=content).SerializeToString()
        envelope = self.envelopes.stored_wire(self.channel, record, self.peer_id)
        published = self.envelopes.outgoing(self.channel, envelope)
        self.engine.member.send(published, now)
        if self.channel in self.envelopes.private:  # a blind store keeps it (see ``SvsEngine.push``)
            self.engine.push(published)
        self.lamport = lamport
        return message_id

    def send_ephemeral(self, payload: Payload, now: int) -> None:
        self.engine.send_ephemeral(payload.encode(), now)

    def seal(self, envelopes: Envelopes, data: bytes, wire_of) -> bytes | None:
        if data[:2] == _PRIVATE_RECORD:  # pushed to blind stores: sealed and encrypted by its author already
            return data
        if is_svs_packet(data):
            return envelopes.seal_svs(self.channel, data)
        return envelopes.seal_sds(self.channel, data, wire_of)  # an ephemeral message

    # ---------------------------------------------------------------- step

    def drain(self, now: int, release_all: bool = False) -> Step:
        out = Translation()
        records, ephemeral = self.engine.take_inputs()
        other: list[object] = list(ephemeral)
        replicated: set[str] = set()
        for record in records:
            sender = record.msg.sender_id
            wire = self.envelopes.stored_wire(self.channel, record.data, sender)
            if is_envelope(wire) and self._admit(self._row(wire, record, now, own=False), out):
                replicated.add(sender)
        for author in replicated:
            self.engine.member.delivered_elsewhere(node_name(author), self._last(author))
        for event in self.engine.member.events():
            if isinstance(event, Delivered) and (stored := self._stored_form(event.content, event.own)) is not None:
                self._admit(self._row(*stored, now, event.own), out)
            elif isinstance(event, DataWanted):
                self._provide(event)
            elif isinstance(event, Known):
                self._known(event, out)
            elif isinstance(event, Missing):
                out.events.append(ev.MessagesMissing(self.channel, event.high - event.low + 1, ()))
                self._watch_gap(sender_of(event.node), event.high, now)
            elif isinstance(event, Rejected):
                other.append(event)
        out.seq_gaps = self._overdue_gaps(now)
        side = translate(self.channel, other, now)
        out.typists, out.leavers, out.away, out.rejected = side.typists, side.leavers, side.away, side.rejected
        out.events += side.events
        member = self.engine.member
        changed = out.rows or out.acks or member.vector_version != self._saved_version
        # otherwise only timers, fetches in flight, holders changed: re-learned if lost
        state = (member.vector_version, _saved(member)) if changed else None
        return Step(out, self.engine.datagrams_to_send(now), state)

    def commit(self, step: Step, now: int) -> None:
        if step.state is not None:
            version, saved = step.state
            self.store.commit_step(self.channel, {"parts": {"svs": saved}, "entries": {}},
                                   step.translation.rows, now, step.translation.acks)
            self._saved_version = version

    def settle(self, step: Step) -> None:
        if any(row.kind == "topic" for row in step.translation.rows):
            step.translation.events += self.topic_changes()

    def _stored_form(self, content: bytes, own: bool) -> tuple[bytes, Checked | None] | None:
        """A publication's content as the store keeps it - the signed envelope
        (a private channel's travels encrypted) - with its record as routing
        checked it, payload decoded (opening it again is a cache hit; our own
        public one is not opened: its payload is read off it). None if it does
        not open - never for what routing let through."""
        if is_envelope(content) and own:
            return content, None
        record = self.envelopes.open_record(content)
        if isinstance(record, Refused):
            log.warning("#%s: a delivered publication does not open: %s", self.channel, record.reason)
            return None
        if is_envelope(content):
            return content, record.parsed
        return self.envelopes.stored_wire(self.channel, record.data, record.sender_id), record.parsed

    def _row(self, wire: bytes, record: Checked | None, now: int, own: bool) -> StoredMessage:
        """The row of a chat record: from the record as routing checked it
        (parsed, its payload decoded), or read off the stored wire (our own
        public publication, delivered back by the member)."""
        if record is not None and isinstance(record.decoded, Payload):
            msg, payload = record.msg, record.decoded
        else:
            msg = SdsMessage.FromString(sds_bytes(wire))
            payload = Payload.decode(msg.content)  # checked when the record was opened
        return StoredMessage(self.channel, msg.message_id, msg.lamport_timestamp, msg.sender_id,
                             payload.nick, payload.kind, payload.text, payload.seq, payload.sent_at, wire,
                             now, now, own, ack="unacknowledged" if own else None, about=payload.about or None,
                             offer=payload.offer)

    def _last(self, author: str) -> int:
        if author not in self._last_seq:
            self._last_seq[author] = self.store.last_seq(self.channel, author)
        return self._last_seq[author]

    def _admit(self, row: StoredMessage, out: Translation) -> bool:
        """Store ``row`` if it is its author's next message (and any that
        waited for it); keep it waiting if an earlier one is missing."""
        author, last = row.sender_id, self._last(row.sender_id)
        if row.seq <= last:
            return False  # had it already (fetched, and replicated too)
        if row.seq > last + 1:
            if self._waiting < PENDING and row.seq not in (waiting := self._pending.setdefault(author, {})):
                waiting[row.seq] = row
                self._waiting += 1
            return False
        self._append(row, out)
        waiting = self._pending.get(author, {})
        while (row := waiting.pop(self._last_seq[author] + 1, None)) is not None:
            self._waiting -= 1
            self._append(row, out)
        return True

    def _append(self, row: StoredMessage, out: Translation) -> None:
        self._last_seq[row.sender_id] = row.seq
        if row.own:
            self._own_ids.put(row.seq, row.message_id)
        self.lamport = max(self.lamport, row.lamport)
        out.rows.append(row)
        out.authors.append((row.sender_id, row.nick))
        # position: where it lands when it is the newest, the usual case (finding it exactly would count the log)
        out.events.append(ev.MessageDelivered(self.channel, self.length, row.message_id, row.sender_id, row.lamport,
                                              row.nick, row.kind, row.text, row.seq, row.own, about=row.about,
                                              offer=row.offer))
        self.length += 1

    def _watch_gap(self, author: str, high: int, now: int) -> None:
        highest, since = self._gaps.get(author, (0, now))
        self._gaps.put(author, (max(high, highest), since))

    def _overdue_gaps(self, now: int) -> list[tuple[str, int, int]]:
        """(author, first, last) of what the member has fetched in vain for
        ``GAP_GRACE_MS`` since our input was last behind (at most
        ``GAP_GRACE_MAX_MS``): to catch up by replication. Sets when to look again."""
        overdue = []
        for author, (high, since) in list(self._gaps.items()):
            if self._last(author) >= high:
                del self._gaps[author]
            elif now >= self._grace_ends(since, now):
                overdue.append((author, self._last(author) + 1, high))
                del self._gaps[author]  # a vector showing it still missing watches it again
        self.retry_at = min((self._grace_ends(since, now) for _, since in self._gaps.values()), default=None)
        return overdue

    def _grace_ends(self, since: int, now: int) -> int:
        caught_up = max(since, self.backlog.last_behind(now) or since)
        return min(caught_up + GAP_GRACE_MS, since + GAP_GRACE_MAX_MS)

    def _known(self, known: Known, out: Translation) -> None:
        """Members' vectors show our message ``known.seq``: ◐ by that many."""
        message_id = self._own_ids.get(known.seq) or self._own_id(known.seq)
        if message_id is not None:
            out.acks.append((message_id, "possibly_acknowledged", known.members))
            out.events.append(ev.MessageAcknowledged(self.channel, message_id, "possibly_acknowledged",
                                                     known.members, "state_vector"))

    def _own_id(self, seq: int) -> str | None:
        """Our message ``seq`` from before this session (an index lookup)."""
        wire = self.store.entry(self.channel, self.peer_id, seq)
        return SdsMessage.FromString(sds_bytes(wire)).message_id if wire is not None and is_envelope(wire) else None

    def _provide(self, wanted: DataWanted) -> None:
        """Answer a data interest for a publication no longer in memory, from the store."""
        wire = self.store.entry(self.channel, sender_of(wanted.node), wanted.seq)
        if wire is not None and is_envelope(wire):
            self.engine.member.provide(wanted.node, wanted.bootstrap, wanted.seq,
                                       self.envelopes.outgoing(self.channel, wire), wanted.requester)

    # --------------------------------------------------------------- state

    topic_changes = Conversation.topic_changes  # the same store, the same rule

    def rollback(self, now: int, step: Step | None = None) -> None:
        self.engine = self._load(now)
        self._count_from_store()


def _saved(member: Channel) -> dict:
    """The member's state as saved with each step, without its cache of
    publications (the store holds them: a data interest for one is
    answered from there)."""
    state = member.export_state()
    state["cache"] = []
    return state
