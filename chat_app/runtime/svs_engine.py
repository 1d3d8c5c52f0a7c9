"""An SVS group member as the runtime's engine of a channel.

The runtime feeds every conversation's engine the same way
(``receive_message``, ``get_timer``, ``handle_timer``), whatever protocol it
speaks. This wraps ``sync.svs.Channel`` to take what reaches an SVS channel:

* SVS packets (sync interests, data interests, publications): to the SVS
  member;
* SDS ephemeral messages (typing, leave, away): SVS has no ephemeral
  publications, and these are not synced by any protocol, so every channel
  speaks them alike; reported as ``EphemeralReceived``;
* chat records (an author's signed SDS chat message): what replication
  brings, and what a blind store keeps of a private channel and hands a
  late member (see ``push``) - kept for the conversation, which stores them
  in each author's sequence order and tells the member it need not fetch
  them;
* a publication no vector announced: what blind stores kept before they
  were pushed records. The member would drop it, as NDN drops unsolicited
  data, but routing has verified its record (its author's signature, this
  channel, the number in its name), so it is kept as a chat record, as if
  replicated;
* SDS sync messages: a peer that runs this channel on SDS; counted, dropped.

It stays sans-I/O like the engines: bytes and ``now`` in, events and
datagrams out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable

from sync.core import BROADCAST, Outgoing
from sync.sds import EphemeralReceived
from sync.sds.ids import compute_message_id
from chat_app.runtime.fetching import FETCH_GRACE_MS, Backlog
from chat_app.runtime.outbox import Silent
from chat_app.runtime.svs_routing import SvsDatagram, sender_of
from sync.sds.wire import Checked
from sync.svs import Channel, Config, packets
from proto.sds_pb2 import SdsMessage

CONFIG = Config(cache_size=32, keepalive_ms=20_000, fetch_timeout_ms=250, behind_timeout_ms=FETCH_GRACE_MS,
                behind_fetch_window=256, fetch_backoff_max_ms=2_000, repeat_ms=1_000, max_producers=4_096,
                max_hearsay=1_024, adopt_own_seq=False)
"""Publications kept in memory to answer data interests; older ones are read
from the store (``DataWanted``): few, since the state is saved each step.
A sign of life from each member at least every 20 s: the peer table lets a
peer go after 45 s without a datagram from it (``chat_app.peers``), and SVS
alone leaves all but one member of a quiet group silent. On a LAN a data
interest is answered in milliseconds, so one unanswered for 250 ms is
retried (after 0.25, 0.5, 1, 2, 2 ... s), and a publication's vector is
repeated about 1, 2 and 4 s later unless another member says it first: at
30% loss a channel of 5 or 20 members converged in 23-47 s at p99 with the
engine's defaults (1 s, backoff to 8 s, no repeats) and in 4-10 s with
these (``benchmarks/protocols_runtime.py``, seeds 1-3). But while our own
input is behind (``fetching.Backlog``) the answer is most likely queued,
unread: no data interest is retried till a second after we last read a
large batch, as an SDS channel waits that long before fetching, and up to
256 are in flight instead of 64. With 20 real members on 2 cores, reading
most datagrams in batches of 128-512 seconds late, the 250 ms retries had
every publication asked for 3.6 times and sent back 3 times, nine in ten of
them duplicates that only added to the wait. Data interests in flight
then: as many as a busy group publishes in the seconds an answer takes
when every member is behind - 20 members publish 38 a second that each
member fetches, and with the engine's 64 the window was full at three
requests in four; a member fetched 233 of the 760 publications it lacked,
the rest ran past the grace and replicated, and that load made the
answers slower still. Only then: 256 at all times left 5 members at 30%
loss 0.5 s later at p99, for reasons not traced.

Bounds on what any member (in a public channel, anyone with a key) can make
us keep: at most 4,096 producers in the vector, 1,024 of them known only
from others' vectors (made-up ones never stop being that), each a member's
id (``svs_routing``): a vector of at most ~200 KB. Our own number is ours
alone: it is stored before a publication leaves, so a vector showing us
further on is a lie, not a stale restore."""


class SvsEngine:
    def __init__(self, member: Channel, channel: str, sender_id: str, held: Callable[[str], int],
                 backlog: Backlog) -> None:
        self.member = member
        self.held = held  # author -> how many of its messages (1..n) the store holds
        self.backlog = backlog
        self.channel = channel
        self.sender_id = sender_id
        self.records: list[Checked] = []  # chat records, as routing checked them (payload decoded)
        self.ephemeral: list[EphemeralReceived] = []
        self.stats: Counter[str] = Counter()
        self._out: list[Outgoing] = []

    def receive_message(self, parsed: SvsDatagram | Checked, now: int, source: Hashable | None = None) -> None:
        """What routing made of a datagram for this channel: an SVS packet
        (decoded, a publication's record opened) or a checked SDS message;
        neither is read again."""
        if isinstance(parsed, Checked):
            self._sds(parsed, now)
            return
        packet = parsed.message
        self.member.behind_at = self.backlog.last_behind(now)
        if isinstance(packet, packets.SyncInterest):
            self._settle_new_producers(packet)
        elif isinstance(packet, packets.Publication) and packet.seq > self.member.vector.get(packet.producer, 0):
            self.records.append(parsed.record.parsed)  # verified by routing
            self.stats["unannounced_kept"] += 1
            return
        self.member.receive_message(packet, now, source)

    def _sds(self, parsed: Checked, now: int) -> None:
        message = parsed.msg
        if message.HasField("lamport_timestamp") and message.content:
            self.records.append(parsed)
        elif message.content and not message.HasField("lamport_timestamp"):
            self.ephemeral.append(EphemeralReceived(message.sender_id, message.content, now))
        else:
            self.stats["sds_sync_dropped"] += 1  # someone runs this channel on SDS

    def push(self, record: bytes) -> None:
        """Our new message's record as it travels in a private channel (its
        author's envelope, encrypted: a publication's content), to the peers
        in the channel that never sent us a vector: a blind store announces
        the channel's tag but cannot speak SVS, so it would never see a
        publication (they answer data interests, one member at a time).
        The record alone, not a publication around it, which whoever sends
        it would sign: so the store holds the very datagram every member can
        work out from its own copy (``chat_app.runtime.blind``), and both
        sides of a replication link can tell what the other lacks."""
        self._out.append(Outgoing(record, Silent(frozenset(self.member.member_addresses()))))

    def _settle_new_producers(self, interest: packets.SyncInterest) -> None:
        """A producer the member meets for the first time may have messages in
        the store already (replication came first): those are not fetched."""
        for producer in interest.vector:
            if producer not in self.member.vector and (held := self.held(sender_of(str(producer.node)))):
                self.member.delivered_elsewhere(producer.node, held, producer.bootstrap)

    def send_ephemeral(self, content: bytes, now: int) -> None:
        message_id = compute_message_id(self.sender_id, self.channel, None, content)
        msg = SdsMessage(sender_id=self.sender_id, message_id=message_id, channel_id=self.channel, content=content)
        self._out.append(Outgoing(msg.SerializeToString(), BROADCAST))

    def get_timer(self) -> int | None:
        return self.member.get_timer()

    def handle_timer(self, now: int) -> None:
        self.member.behind_at = self.backlog.last_behind(now)
        self.member.handle_timer(now)

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        out, self._out = self._out, []
        return out + self.member.datagrams_to_send(now)

    def take_inputs(self) -> tuple[list[Checked], list[EphemeralReceived]]:
        records, ephemeral, self.records, self.ephemeral = self.records, self.ephemeral, [], []
        return records, ephemeral


def is_svs_packet(data: bytes) -> bool:
    """An NDN Interest (5) or Data (6) packet; an SDS message starts with a protobuf tag (0x0a)."""
    return data[:1] in (bytes((packets.INTEREST,)), bytes((packets.DATA,)))
