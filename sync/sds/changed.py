"""What a part changed since it was last saved, for a store that writes
entry by entry (``Channel.take_changes``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ChangedKeys(dict[str, set[str]]):
    """Per collection, the keys changed since ``mark_saved``: a part marks them as
    it changes an entry (``changed["outgoing"].add(mid)``) and exports only
    those."""

    def __init__(self, *collections: str) -> None:
        super().__init__((name, set()) for name in collections)

    def export(self, entry: Callable[[str, str], Any]) -> dict[str, dict[str, Any]]:
        """``entry(collection, key)`` for every key marked, by collection;
        collections with none are left out."""
        return {name: {key: entry(name, key) for key in keys} for name, keys in self.items() if keys}

    def mark_saved(self) -> None:
        for keys in self.values():
            keys.clear()
