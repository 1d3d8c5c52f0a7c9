"""Where the reader left each channel: the newest message they had seen, by
its place in the log (lamport, message id), kept in ``read-markers.json`` in
the data directory so that the "new messages" rule survives a restart."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "read-markers.json"

Key = tuple[int, str]


@dataclass
class ReadMarkers:
    seen: dict[str, Key] = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path) -> ReadMarkers:
        try:
            raw = json.loads((data_dir / FILE_NAME).read_text(encoding="utf-8"))
            return cls({channel: (int(lamport), str(mid)) for channel, (lamport, mid) in raw.items()})
        except (OSError, ValueError, TypeError, AttributeError):
            return cls()  # none yet, or unreadable: every message counts as seen, as before markers were kept

    def get(self, channel: str) -> Key | None:
        return self.seen.get(channel)

    def saw(self, channel: str, key: Key | None) -> None:
        """The reader has seen ``channel`` up to ``key``; never moves back."""
        if key is not None and (channel not in self.seen or key > self.seen[channel]):
            self.seen[channel] = key

    def save(self, data_dir: Path) -> None:
        try:
            partial = data_dir / f"{FILE_NAME}.partial"
            partial.write_text(json.dumps({c: list(k) for c, k in self.seen.items()}), encoding="utf-8")
            os.replace(partial, data_dir / FILE_NAME)
        except OSError:
            pass  # the next start shows no rule; nothing else depends on it
