"""p2panda-style replication (log-height and set-reconciliation modes),
sans-I/O: CBOR messages and a ``Connection`` per peer that follows the
``sync.core`` engine protocol. It never reads the store and never calls
back: it asks for log heights, entries and what an arrived entry is with
events the runtime answers with commands."""

from .connection import Connection, EntryKey, Verdict
from .events import (
    Closed,
    EntriesWanted,
    EntryArrived,
    EntryDropped,
    EntryReceived,
    HeightsWanted,
    RemoteAnnounced,
    SessionFinished,
)
from .messages import EntryMessage, EntryRefused, Message, ReplicationError, decode, encode, log_id, read_message

__all__ = ["Closed", "Connection", "EntriesWanted", "EntryArrived", "EntryDropped", "EntryKey", "EntryMessage",
           "EntryReceived", "EntryRefused", "HeightsWanted", "Message", "RemoteAnnounced", "ReplicationError",
           "SessionFinished", "Verdict", "decode", "encode", "log_id", "read_message"]
