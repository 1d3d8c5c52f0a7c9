"""Where an SVS datagram goes, and what it must be before an engine sees it.

An SVS channel's group is the NDN name ``/sds-chat/<link name>`` and each
member's node id is ``/<sender id>``, so the channel of any of the three
packets can be read off its name: a sync interest is
``/sds-chat/<link>/<vector>``, a data interest or publication
``/<node>/sds-chat/<link>[/<bootstrap>]/<seq>``.

Checked here, before the engine (the envelope is already verified):

* a sync interest names its sender: it must be the signer (a member speaks
  only for its own vector's origin), and every node its vector names must
  be a member's id (``/<sender id>``), so no entry is larger than that;
* a publication may come from any member that holds it, so its content is
  its author's own signed envelope of a chat record (an SDS message without
  causal history or bloom filter: sender, id, channel, Lamport timestamp,
  the chat payload), which must verify, be the producer's, be about this
  channel, and carry the sequence number the name says. A bad one never
  reaches the engine, which then asks another member.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from chat_app.runtime.routing import Refused, SdsDatagram
from sync.core import RemoteProtocolError
from sync.svs import Name, packets, tlv
from sync.svs.names import GENERIC, NAME

PREFIX = "sds-chat"
_PREFIX = (8, PREFIX.encode())
_SENDER_ID = re.compile(rb"[0-9a-f]{32}")


def group_name(link_name: str) -> str:
    return f"/{PREFIX}/{link_name}"


def node_name(sender_id: str) -> str:
    return f"/{sender_id}"


def sender_of(node: str) -> str:
    return node.removeprefix("/")


def is_member_node(node: Name) -> bool:
    """A NodeID of ours: one component, a sender id (32 hex digits)."""
    return len(node.components) == 1 and node.components[0][0] == GENERIC \
        and _SENDER_ID.fullmatch(node.components[0][1]) is not None


@dataclass(frozen=True, slots=True)
class SvsDatagram:
    channel: str
    sender_id: str  # the signer: whoever sent this datagram (a publication's author may be another)
    data: bytes
    message: packets.SyncInterest | packets.DataInterest | packets.Publication  # decoded once, here
    record: SdsDatagram | None = None  # a publication's content, opened and checked here
    chat: bool = False  # never: what an SVS datagram says, it says about its sender alone

    @property
    def parsed(self) -> SvsDatagram:
        """What the channel's engine takes (``SvsEngine.receive_message``): all of it."""
        return self


def link_of(data: bytes) -> str | None:
    """The link name an SVS packet is about, read off its name; None if it has none."""
    try:
        [(_, body)] = tlv.elements(data)
        name = next(value for type_, value in tlv.elements(body) if type_ == NAME)
        components = [(t, bytes(v)) for t, v in tlv.elements(name)]
    except (RemoteProtocolError, ValueError, StopIteration):
        return None
    for i, component in enumerate(components[:-1]):
        if component == _PREFIX and components[i + 1][0] == 8:
            return components[i + 1][1].decode(errors="replace")
    return None


def route_svs(data: bytes, signer_id: str, channel_of: Callable[[str], str | None],
              open_record: Callable[[bytes], SdsDatagram | Refused]) -> SvsDatagram | Refused:
    link = link_of(data)
    channel = channel_of(link) if link is not None else None
    if channel is None:
        return Refused("malformed", "an SVS packet names no sds-chat group")
    try:
        packet = packets.decode(data, Name.parse(group_name(link)))
    except RemoteProtocolError as exc:
        return Refused(exc.kind, str(exc))
    if isinstance(packet, packets.SyncInterest):
        if packet.sender != Name.of(node_name(signer_id)):
            return Refused("impostor", f"a sync interest from {str(packet.sender)[:40]} signed by {signer_id}")
        if (odd := next((p.node for p in packet.vector if not is_member_node(p.node)), None)) is not None:
            return Refused("malformed", f"a vector names {str(odd)[:40]!r}, not a member's id")
    record = None
    if isinstance(packet, packets.Publication):
        record = open_record(packet.content)
        problem = _record_problem(packet, channel, record)
        if problem is not None:
            return Refused("publication", problem)
    return SvsDatagram(channel, signer_id, data, packet, record)


def _record_problem(publication: packets.Publication, channel: str, record: SdsDatagram | Refused) -> str | None:
    if isinstance(record, Refused):
        return f"its record: {record.reason}"
    if not record.chat:
        return "its record is not a chat message"
    if record.channel != channel or Name.of(node_name(record.sender_id)) != publication.producer.node:
        return "its record is another channel's or another author's"
    if record.seq != publication.seq:
        return f"its record does not carry sequence number {publication.seq}"
    return None
