"""Small tools for driving one SVS member by hand."""

from sync.core import BROADCAST
from sync.svs import Channel, Config, Name, Producer
from sync.svs import packets, vector

T0 = 1_700_000_000_000
BOOT = T0 // 1000
GROUP = "/sds-chat/general"


def member(name="/me", now=T0, config=None, **kwargs) -> Channel:
    """A member that has already sent its opening sync interest."""
    ch = Channel(GROUP, name, now, config or Config(), **kwargs)
    ch.handle_timer(now)
    ch.datagrams_to_send(now)
    return ch


def p(name: str, bootstrap: int = BOOT) -> Producer:
    return Producer(Name.parse(name), bootstrap)


def sync_interest(sender: str, vec: dict, part=None, last=None) -> bytes:
    entries = vector.encode_entries(vector.entries_by_node(vec))
    return packets.encode_sync_interest(Name.parse(GROUP), Name.parse(sender), entries, 0, part, last)


def decode(data: bytes):
    return packets.decode(data, Name.parse(GROUP))


def broadcasts(ch: Channel, now: int) -> list:
    return [decode(o.data) for o in ch.datagrams_to_send(now) if o.to is BROADCAST]
