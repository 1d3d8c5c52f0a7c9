"""Our messages to one peer that it has not acknowledged yet, by conversation.

The bodies are kept only while a record refers to them: an ack removes both.
Within a conversation they are kept oldest first (timestamps only grow), which
is the order the sending rule walks them in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(slots=True)
class OwnMessage:
    group_id: bytes
    timestamp: int
    body: bytes


class Unacknowledged:
    def __init__(self) -> None:
        self._messages: dict[bytes, OwnMessage] = {}
        self._conversations: dict[bytes, OrderedDict[bytes, None]] = {}  # group -> ids, oldest first

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, mid: bytes) -> OwnMessage:
        return self._messages[mid]

    def add(self, mid: bytes, message: OwnMessage) -> None:
        self._messages[mid] = message
        self._conversations.setdefault(message.group_id, OrderedDict())[mid] = None

    def pop(self, mid: bytes) -> OwnMessage:
        message = self._messages.pop(mid)
        conversation = self._conversations[message.group_id]
        del conversation[mid]
        if not conversation:
            del self._conversations[message.group_id]
        return message

    def conversation(self, group_id: bytes) -> Iterator[bytes]:
        """The conversation's unacknowledged ids, oldest first."""
        return iter(self._conversations.get(group_id, ()))

    def groups(self) -> list[bytes]:
        return list(self._conversations)

    def export(self) -> list:
        return [[mid, m.group_id, m.timestamp, m.body] for mid, m in self._messages.items()]

    def restore(self, rows: list) -> None:
        for mid, group, stamp, body in rows:
            self.add(mid, OwnMessage(group, stamp, body))
