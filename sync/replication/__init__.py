"""p2panda-style replication (log-height and set-reconciliation modes),
sans-I/O: CBOR messages and a ``Connection`` per peer that follows the
``sync.core`` engine protocol. It never reads the store: it asks for log
heights and entries with events the runtime answers with commands."""

from .connection import Connection, EntryKey, Validate
from .events import Closed, EntriesWanted, EntryDropped, EntryReceived, HeightsWanted, RemoteAnnounced, SessionFinished
from .messages import EntryRefused, ReplicationError, decode, encode, log_id

__all__ = ["Closed", "Connection", "EntriesWanted", "EntryDropped", "EntryKey", "EntryReceived", "EntryRefused",
           "HeightsWanted", "RemoteAnnounced", "ReplicationError", "SessionFinished", "Validate", "decode", "encode",
           "log_id"]
