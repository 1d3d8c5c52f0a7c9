"""The latest publications this member delivered, kept to answer data
interests without asking the runtime (least recently used goes first)."""

from __future__ import annotations

from collections import OrderedDict

from .names import Name
from .vector import Producer


class PublicationCache(OrderedDict[tuple[Producer, int], bytes]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def remember(self, producer: Producer, seq: int, content: bytes) -> None:
        self[(producer, seq)] = content
        self.move_to_end((producer, seq))
        while len(self) > self.size:
            self.popitem(last=False)

    def take(self, producer: Producer, seq: int) -> bytes | None:
        content = self.get((producer, seq))
        if content is not None:
            self.move_to_end((producer, seq))
        return content

    def export(self) -> list:
        """``[node, bootstrap, seq, content]``, least recently used first."""
        return [[p.node.encode(), p.bootstrap, seq, content] for (p, seq), content in self.items()]

    def restore(self, saved: list) -> None:
        for n, b, seq, content in saved:
            self[(Producer(Name.decode(n), b), seq)] = content
