"""Typing indicators: ours go out at most every ``TYPING_EVERY_MS``; theirs
are shown until ``TYPING_EXPIRES_MS`` pass without another, or until the
typist's message arrives."""

from __future__ import annotations

from chat_app import events as ev

TYPING_EVERY_MS = 3_000
TYPING_EXPIRES_MS = 6_000


class TypingIndicator:
    def __init__(self) -> None:
        self._sent: dict[str, int] = {}
        self._seen: dict[tuple[str, str], int] = {}  # (channel, peer) -> expires at

    def should_send(self, channel: str, now: int) -> bool:
        if now - self._sent.get(channel, -TYPING_EVERY_MS) < TYPING_EVERY_MS:
            return False
        self._sent[channel] = now
        return True

    def seen(self, channel: str, peer_id: str, nick: str, now: int) -> ev.Typing | None:
        """``peer_id`` is typing: the event to show, or None if it is already shown."""
        key = (channel, peer_id)
        fresh = key not in self._seen
        self._seen[key] = now + TYPING_EXPIRES_MS
        return ev.Typing(channel, peer_id, nick, now + TYPING_EXPIRES_MS) if fresh else None

    def message_from(self, channel: str, peer_id: str) -> None:
        self._seen.pop((channel, peer_id), None)

    def deadlines(self) -> list[int]:
        return list(self._seen.values())

    def expire(self, now: int) -> list[ev.TypingStopped]:
        out = []
        for (channel, peer_id), expires in list(self._seen.items()):
            if expires <= now:
                del self._seen[(channel, peer_id)]
                out.append(ev.TypingStopped(channel, peer_id))
        return out
