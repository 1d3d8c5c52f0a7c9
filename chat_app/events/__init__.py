"""What the user interfaces see: typed application events.

Every event the node reports - a delivered message, an acknowledgement, a
peer coming or going, someone typing, a catch-up - is a small frozen
dataclass under one base class, the h11 way. The TUI handles them by type;
headless mode writes each as one JSON object whose ``"event"`` field is the
class's ``name`` and whose other fields are the dataclass fields, in order.

A few fields are left out of the JSON when they carry nothing (a delivered
message's ``gaps`` and ``undecodable``, a peer's unknown ``channels``, an
acknowledgement's ``via`` unless it is a full one): scripts written against
earlier output see exactly the objects they always saw. A class says which
with ``_optional`` and ``_when_known``; a field handed on to the program's
own parts only, which another field already says (a file message's parsed
offer, said by its text), is never written (``_unprinted``). Every event's
JSON comes from its fields and those three, in ``AppEvent.to_json`` alone.

The classes live in one module per subject (``base``, ``local``,
``messages``, ``peers``, ``people``, ``direct``); import them from here.
"""

from chat_app.address import Address

from .base import AppEvent, Emit
from .local import (
    Ready,
    Joined,
    Parted,
    NickChanged,
    Error,
    Ignoring,
    MessagesHeld,
    Bye,
)
from .messages import (
    MessageDelivered,
    MessageChanged,
    AboutRejected,
    TopicChanged,
    MessageWaiting,
    MessageAcknowledged,
    MessagesMissing,
    FetchAsked,
    MessageLost,
    DatagramRejected,
    Typing,
    TypingStopped,
)
from .peers import (
    PeerJoined,
    PeerUpdated,
    PeerHeard,
    PeerAway,
    PeerLeft,
    Peers,
    CatchupStarted,
    CatchupFinished,
    ReplicationClosed,
    HEARD_EVERY_MS,
)
from .people import (
    Whois,
    Trusted,
    Verified,
    KeyChanged,
)
from .direct import (
    Invited,
    InviteSent,
    DmOpened,
    DmDelivered,
    DmAcknowledged,
)

__all__ = [
    "AboutRejected",
    "Address",
    "AppEvent",
    "Bye",
    "CatchupFinished",
    "CatchupStarted",
    "DatagramRejected",
    "DmAcknowledged",
    "DmDelivered",
    "DmOpened",
    "Emit",
    "Error",
    "HEARD_EVERY_MS",
    "Ignoring",
    "InviteSent",
    "Invited",
    "Joined",
    "KeyChanged",
    "MessageAcknowledged",
    "MessageChanged",
    "MessageDelivered",
    "MessageLost",
    "MessageWaiting",
    "MessagesHeld",
    "MessagesMissing",
    "FetchAsked",
    "NickChanged",
    "Parted",
    "PeerAway",
    "PeerHeard",
    "PeerJoined",
    "PeerLeft",
    "PeerUpdated",
    "Peers",
    "Ready",
    "ReplicationClosed",
    "TopicChanged",
    "Trusted",
    "Verified",
    "Typing",
    "TypingStopped",
    "Whois",
]
