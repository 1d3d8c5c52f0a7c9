"""State Vector Sync (SVS, NDN; ``specs/svs.txt``), sans-I/O.

``Channel`` is one member of a sync group and follows the ``sync.core``
engine protocol:

    from sync.svs import Channel
    ch = Channel(group="/sds-chat/general", node_id="/ab12", now=t)
    ch.send(b"hello", now=t)          # -> sequence number; a sync interest is queued
    ch.receive(datagram, now=t, source=addr)
    for event in ch.events(): ...     # Delivered, Missing, DataWanted, Known, Rejected
    for out in ch.datagrams_to_send(now=t): ...   # Outgoing(data, to=BROADCAST or a member)
    ch.handle_timer(now=ch.get_timer())

Modules: ``tlv`` (NDN TLV numbers), ``names`` (NDN Names, canonical order),
``vector`` (the state vector TLV, v3 bootstrap times, "outdated"), ``split``
(vectors larger than a datagram), ``packets`` (sync interest, data interest,
publication), ``announce`` (the vector as this member sends it),
``suppression`` (the steady and suppression states), ``fetch`` (retrieval
with retry and backoff), ``receipts`` (our own entry in others' vectors),
``cache`` (recent publications), ``channel`` (one member, from these parts),
``plain`` (export/restore).
"""

from sync.core import LocalProtocolError, RemoteProtocolError

from .channel import STEADY, SUPPRESSION, Channel
from .config import Config
from .events import DataWanted, Delivered, Event, Known, Missing, Rejected
from .names import Name
from .vector import Producer, is_outdated

__all__ = [
    "STEADY", "SUPPRESSION", "Channel", "Config", "DataWanted", "Delivered", "Event", "LocalProtocolError",
    "Known", "Missing", "Name", "Producer", "Rejected", "RemoteProtocolError", "is_outdated",
]
