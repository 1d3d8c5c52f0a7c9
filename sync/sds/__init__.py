"""Scalable Data Sync (SDS) with the SDS-R repair extension, sans-I/O.

``Channel`` follows the ``sync.core`` engine protocol:

    from sync.sds import Channel
    ch = Channel(channel_id="general", sender_id="ab12...", now=t)
    ch.send(b"hello", now=t)          # -> message id; the datagram is queued
    ch.receive(datagram, now=t)
    for event in ch.events(): ...
    for out in ch.datagrams_to_send(now=t): ...   # Outgoing(data, to=BROADCAST)
    ch.handle_timer(now=ch.get_timer())
"""

from .channel import Channel, LogView
from .config import Config
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import (
    Acknowledged,
    AcknowledgedByMore,
    Buffered,
    Delivered,
    EphemeralReceived,
    Event,
    HistoryEntry,
    Lost,
    Missing,
    PossiblyAcknowledged,
    Rejected,
    RepairRequested,
    RepairSent,
)
from .wire import compute_message_id

__all__ = [
    "Acknowledged", "AcknowledgedByMore", "Buffered", "Channel", "Config", "Delivered", "EphemeralReceived", "Event",
    "HistoryEntry", "LocalProtocolError", "LogView", "Lost", "Missing",
    "PossiblyAcknowledged", "ProtocolError", "Rejected", "RemoteProtocolError",
    "RepairRequested", "RepairSent", "compute_message_id",
]
