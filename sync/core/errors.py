"""Errors, kept apart by whose fault they are (as h11 does).

A ``LocalProtocolError`` is raised to the caller: it asked the engine to do
something impossible (send empty content, answer a request nobody made). A
``RemoteProtocolError`` describes bad bytes from the network; an engine never
lets it escape ``receive`` - it counts it and reports it as an event
(``Rejected`` for datagram engines, ``Closed`` for a stream) and carries on.
"""


class ProtocolError(Exception):
    """Base class of every engine's errors."""


class LocalProtocolError(ProtocolError):
    """The local caller misused the engine."""


class RemoteProtocolError(ProtocolError):
    """Input from the network is malformed; ``kind`` names the counter it is
    counted under and ``detail`` says what is wrong, in one line."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
