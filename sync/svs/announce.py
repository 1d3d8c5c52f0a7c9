"""The vector as this member sends it: encoded entries, kept per node and
re-encoded only when that node's entry changes, and cut to fit datagrams
(``split``): whole if it fits, else in parts, or as an excerpt of the most
recently updated entries on a new publication."""

from __future__ import annotations

from . import packets, split, vector
from .names import Name
from .vector import Producer


class Announcer:
    def __init__(self, group: Name, node: Name, max_datagram_bytes: int) -> None:
        self.group = group
        self.node = node
        self.budget = max_datagram_bytes - packets.sync_interest_overhead(group, node)
        self.by_node: dict[Name, dict[int, int]] = {}  # node -> bootstrap -> latest seq
        self.touched: dict[Name, int] = {}  # node -> when its entry last grew (a counter)
        self.clock = 0
        self._encoded: dict[Name, bytes] = {}  # node -> its encoded StateVectorEntry

    def set(self, producer: Producer, seq: int) -> None:
        self.by_node.setdefault(producer.node, {})[producer.bootstrap] = seq
        self._encoded.pop(producer.node, None)
        self.clock += 1
        self.touched[producer.node] = self.clock

    def sync_interests(self, nonce, excerpt: bool = False) -> list[bytes]:
        """The vector as sync interests; ``nonce()`` draws each one's nonce."""
        if excerpt:
            recent = sorted(self.by_node, key=lambda node: (-self.touched[node], node.canonical_key()))
            chosen = split.excerpt([(node, self._entry(node)) for node in recent], self.budget)
            if len(chosen) < len(recent):
                return [self._interest(sorted(chosen, key=lambda e: e[0].canonical_key()), nonce(), 0)]
        canonical = sorted(self.by_node, key=Name.canonical_key)
        parts = split.pack([(node, self._entry(node)) for node in canonical], self.budget)
        if len(parts) == 1:
            return [self._interest(parts[0], nonce())]
        return [self._interest(part, nonce(), index, len(parts) - 1) for index, part in enumerate(parts)]

    def _interest(self, entries: list[tuple[Name, bytes]], nonce: int, part: int | None = None,
                  last: int | None = None) -> bytes:
        return packets.encode_sync_interest(self.group, self.node, [entry for _, entry in entries], nonce,
                                            part, last)

    def _entry(self, node: Name) -> bytes:
        entry = self._encoded.get(node)
        if entry is None:
            entry = self._encoded[node] = vector.encode_entry(node, self.by_node[node])
        return entry

    # -------------------------------------------------------------- state
    # The entries themselves are the member's vector (restored through
    # ``set``); what is the announcer's own is how recently each grew.

    def export(self) -> dict:
        return {"touched": [[node.encode(), at] for node, at in self.touched.items()], "clock": self.clock}

    def restore(self, saved: dict) -> None:
        """Back to what ``export`` gave, after the entries were ``set`` again."""
        self.touched = {Name.decode(n): at for n, at in saved["touched"]}
        self.clock = saved["clock"]
