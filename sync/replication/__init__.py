"""p2panda-style replication (log-height mode), sans-I/O: CBOR messages and
a ``Connection`` per peer; the app supplies the store and the stream."""

from .connection import Closed, Connection, EntryReceived, LogStore, RemoteAnnounced, SessionFinished
from .messages import ReplicationError, decode, encode, log_id

__all__ = ["Closed", "Connection", "EntryReceived", "LogStore", "RemoteAnnounced", "ReplicationError",
           "SessionFinished", "decode", "encode", "log_id"]
