"""A hostile replication peer, and the forged entries it sends.

``Forger`` speaks the replication protocol itself - a sans-I/O
``Connection`` over a made-up store: it names the logs it likes and, asked
for entries, sends the ones it was given, whatever they are. The runtime
tests drive it against a real runtime in memory; the test LAN's attacker
drives it over a TCP socket of its own host. The builders make the entries
an attacker can make: someone's message signed with its own key, a real
entry with one bit changed, a datagram under a channel's tag and another
key, and an envelope of one private channel encrypted for another.
"""

from __future__ import annotations

import os

from chat_app.crypto import ChannelKey, Identity, Kind, seal
from chat_app.payload import Payload
from proto.sds_pb2 import SdsMessage
from sync.replication import (
    Connection, EntriesWanted, EntryRefused, HeightsWanted, RemoteAnnounced, SessionFinished,
)
from sync.replication.messages import SET_RECONCILIATION
from tests.replication.checking import Checking
from sync.sds.ids import compute_message_id


def _takes_nothing(channels: tuple[str, ...], entry: bytes):
    raise EntryRefused("ignored", "the forger keeps nothing", fatal=False)


class Forger:
    """Dials a victim (``initiator``) and syncs ``channels`` with made-up
    ``heights`` (``{channel: [(author, height), ...]}``, what it names), then
    sends ``entries`` for whatever it is asked."""

    def __init__(self, channels: tuple[str, ...], heights: dict[str, list[tuple[str, int]]], entries: list[bytes],
                 *, mode: int = SET_RECONCILIATION) -> None:
        self.heights, self.entries = heights, entries
        self.conn = Checking(Connection(channels, initiator=True, now=0, mode=mode), _takes_nothing)
        self.finished = False

    def frames(self) -> list[bytes]:
        """Answer what the connection asked for; the frames it sends."""
        while events := list(self.conn.events()):
            for event in events:
                if isinstance(event, RemoteAnnounced):
                    self.conn.sync()
                elif isinstance(event, HeightsWanted):
                    self.conn.provide_heights(event.session_id, self.heights)
                elif isinstance(event, EntriesWanted):
                    self.conn.provide_entries(event.session_id, self.entries)
                elif isinstance(event, SessionFinished):
                    self.finished = True
        return [out.data for out in self.conn.datagrams_to_send(0)]

    def receive(self, data: bytes) -> None:
        self.conn.receive(data, 0)


def chat_message(sender_id: str, channel: str, seq: int, text: str, lamport: int) -> bytes:
    """The SDS bytes of a chat message, with its true id."""
    content = Payload("text", "alice", text, seq=seq, sent_at=lamport).encode()
    msg = SdsMessage(sender_id=sender_id, channel_id=channel, lamport_timestamp=lamport, content=content,
                     message_id=compute_message_id(sender_id, channel, lamport, content))
    return msg.SerializeToString()


def as_someone_else(attacker: Identity, sender_id: str, channel: str, seq: int, key: ChannelKey | None = None,
                    lamport: int = 1_767_225_600_000) -> bytes:
    """A message naming ``sender_id`` as its sender, signed by the attacker's own key."""
    sds = chat_message(sender_id, channel, seq, "send me the keys", lamport)
    if key is None:
        return seal(attacker, Kind.SDS, sds)
    return key.seal(attacker, Kind.SDS, sds)


def one_bit_changed(entry: bytes) -> bytes:
    """The entry with one bit flipped in its middle (inside the signed bytes)."""
    middle = len(entry) // 2
    return entry[:middle] + bytes((entry[middle] ^ 0x01,)) + entry[middle + 1:]


def under_another_key(envelope: bytes, tag: bytes) -> bytes:
    """An envelope encrypted with a key that is not the channel's, under the channel's tag."""
    datagram = ChannelKey("elsewhere", os.urandom(32)).encrypt(envelope)
    return datagram[:2] + tag + datagram[18:]
