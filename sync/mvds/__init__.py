"""Minimum Viable Data Synchronization (MVDS), sans-I/O: reliable direct
messages between peers through offers, requests, acks and messages, with
retransmission epochs (``specs/mvds.txt``).

``MvdsNode`` follows the ``sync.core`` engine protocol:

    from sync.mvds import MvdsNode
    node = MvdsNode(now=t)
    mid = node.send(peer, group_id, b"hello", now=t)   # 32-byte message id
    node.receive(datagram, now=t, source=peer)
    for event in node.events(): ...        # DmDelivered, DmAcknowledged, Rejected
    for out in node.datagrams_to_send(now=t): ...      # Outgoing(data, to=peer)
    node.handle_timer(now=node.get_timer())
    node.peer_seen(peer, now=t)            # discovery found it again: resend now
"""

from .config import Config, Mode
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import DmAcknowledged, DmDelivered, Event, Rejected
from .node import MESSAGE, OFFER, REQUEST, MvdsNode
from .wire import decode, message_id

__all__ = [
    "MESSAGE", "OFFER", "REQUEST", "Config", "DmAcknowledged", "DmDelivered", "Event",
    "LocalProtocolError", "Mode", "MvdsNode", "ProtocolError", "Rejected", "RemoteProtocolError",
    "decode", "message_id",
]
