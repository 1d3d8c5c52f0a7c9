"""Errors, kept apart by whose fault they are (as h11 does).

A ``LocalProtocolError`` is raised to the caller: it asked the engine to do
something impossible (send empty content, send a message too big for one
datagram). A ``RemoteProtocolError`` describes bad bytes from the network; the
engine never lets it escape ``receive`` - it counts it, reports a ``Rejected``
event and carries on.
"""


class ProtocolError(Exception):
    """Base class of the engine's errors."""


class LocalProtocolError(ProtocolError):
    """The local caller misused the engine."""


class RemoteProtocolError(ProtocolError):
    """A datagram from the network is malformed; ``kind`` names the counter."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
