"""State Vector Sync (SVS, NDN; ``specs/svs.txt``), sans-I/O.

``Channel`` is one member of a sync group and follows the ``sync.core``
engine protocol:

    from sync.svs import Channel
    ch = Channel(group="/sds-chat/general", node_id="/ab12", now=t)
    ch.send(b"hello", now=t)          # -> sequence number; a sync interest is queued
    ch.receive(datagram, now=t, source=addr)
    for event in ch.events(): ...     # Delivered, Missing, DataWanted, Rejected
    for out in ch.datagrams_to_send(now=t): ...   # Outgoing(data, to=BROADCAST or a member)
    ch.handle_timer(now=ch.get_timer())

Modules: ``tlv`` (NDN TLV numbers), ``names`` (NDN Names, canonical order),
``vector`` (the state vector TLV, v3 bootstrap times, "outdated"), ``split``
(vectors larger than a datagram), ``packets`` (sync interest, data interest,
publication), ``fetch`` (retrieval with retry and backoff), ``channel`` (the
steady/suppression state machine), ``plain`` (export/restore).
"""

from sync.core import LocalProtocolError, RemoteProtocolError

from .channel import STEADY, SUPPRESSION, Channel
from .config import Config
from .events import DataWanted, Delivered, Event, Missing, Rejected
from .names import Name
from .vector import Producer, is_outdated

__all__ = [
    "STEADY", "SUPPRESSION", "Channel", "Config", "DataWanted", "Delivered", "Event", "LocalProtocolError",
    "Missing", "Name", "Producer", "Rejected", "RemoteProtocolError", "is_outdated",
]
