"""The engine's errors are the shared ones (see ``sync.core.errors``)."""

from sync.core.errors import LocalProtocolError, ProtocolError, RemoteProtocolError

__all__ = ["LocalProtocolError", "ProtocolError", "RemoteProtocolError"]
