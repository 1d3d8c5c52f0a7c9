"""The runtime's one way out: every datagram sealed and addressed.

Everything leaves in a signed envelope (``Envelopes``): our own messages
sealed as they are sent, someone else's (a repair, a fetch answer) as its
author's original envelope from the store, encrypted in a private channel.
What is for the whole channel goes to each of the channel's targets in the
peer table. The I/O adapter takes the queue with ``Runtime.datagrams_to_send``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chat_app.address import Address
from chat_app.runtime.envelopes import Envelopes, is_envelope
from chat_app.runtime.fetching import Send
from chat_app.runtime.peers import PeerTracker
from chat_app.store import Store
from sync.core import BROADCAST, Outgoing


@dataclass(frozen=True, slots=True)
class Silent:
    """A target: every peer of the channel but ``members`` (the addresses that speak its protocol to us)."""

    members: frozenset


Seal = Callable[[Envelopes, bytes, Callable[[str], "bytes | None"]], "bytes | None"]
"""A conversation's way of putting what its engine produced in an envelope (None: nothing to send)."""


class Outbox:
    def __init__(self, store: Store, envelopes: Envelopes, peers: PeerTracker) -> None:
        self.store = store
        self.envelopes = envelopes
        self.peers = peers
        self._rekey = envelopes.rekey(store.keys.rekey_statement())  # told to each peer as it is met
        self.introductions: list[bytes] = []  # signed statements each peer gets when we meet it
        self._out: list[tuple[bytes, Address]] = []

    def take(self) -> list[tuple[bytes, Address]]:
        out, self._out = self._out, []
        return out

    def extend(self, datagrams: Iterable[tuple[bytes, Address]]) -> None:
        """Datagrams that travel as they are (a blind channel's, kept unopened)."""
        self._out += datagrams

    def send(self, data: bytes, address: Address) -> None:
        """One datagram already sealed by its sender (a direct conversation's)."""
        self._out.append((data, address))

    def met(self, address: Address) -> None:
        """A peer we had not met, or one tried at another of its addresses: tell
        it our legacy id moved to our key, if it did, and what else we
        introduce ourselves with (our exchange key). Each is signed and only
        ever sent by us, so it also tells the peer where we are."""
        if self._rekey is not None:
            self._out.append((self._rekey, address))
        self._out += [(statement, address) for statement in self.introductions]

    def engine(self, channel: str, seal: Seal, datagrams: Iterable[Outgoing]) -> None:
        """What ``channel``'s engine sends, each in its envelope (``seal``: the conversation's, for its protocol)."""
        for out in datagrams:
            data = seal(self.envelopes, out.data, lambda mid: self.stored(channel, mid))
            if data is None:
                continue
            if out.to is BROADCAST:
                self.broadcast(channel, data)
            elif isinstance(out.to, Silent):
                link = self.envelopes.link_name(channel)
                self._out += [(data, address) for address in self.peers.targets(link) if address not in out.to.members]
            else:
                self._out.append((data, out.to))

    def fetches(self, channel: str, sends: list[Send]) -> None:
        """Fetch requests (see ``Fetcher.requests``), sealed."""
        for data, target in sends:
            data = self.envelopes.seal_fetch(channel, data)
            if target is None:
                self.broadcast(channel, data)
            else:
                self._out.append((data, target))

    def fetched(self, channel: str, wires: list[bytes], address: Address) -> None:
        """Stored envelopes that answer ``address``'s fetch request."""
        self._out += [(self.envelopes.outgoing(channel, wire), address) for wire in wires]

    def broadcast(self, channel: str, data: bytes) -> None:
        self._out += [(data, address) for address in self.peers.targets(self.envelopes.link_name(channel))]

    def stored(self, channel: str, message_id: str) -> bytes | None:
        """A stored message's envelope, to pass on (None: unknown, or stored before envelopes)."""
        wire = self.store.wire(channel, message_id)
        return wire if wire is not None and is_envelope(wire) else None
