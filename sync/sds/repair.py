"""SDS-R timing and response groups, exactly as the extension defines them.

    T_req  = now + hash(self, msg_id) % (T_max - T_min) + T_min
    T_resp = now + (hash(self) XOR hash(sender)) * hash(msg_id) % T_max
    responder  iff  hash(self, msg_id) % G == hash(sender, msg_id) % G

The original sender's distance to itself is 0, so it answers first; everyone
else backs off pseudorandomly, and a rebroadcast seen first cancels the rest.
"""

from __future__ import annotations

from collections import OrderedDict

from sync.core import Schedule

from .config import Config
from .ids import hash64


def request_at(now: int, self_id: str, message_id: str, config: Config) -> int:
    span = config.repair_t_max_ms - config.repair_t_min_ms
    return now + hash64(self_id, message_id) % span + config.repair_t_min_ms


def response_at(now: int, self_id: str, sender_id: str, message_id: str, config: Config) -> int:
    distance = hash64(self_id) ^ hash64(sender_id)
    return now + distance * hash64(message_id) % config.repair_t_max_ms


def is_responder(self_id: str, sender_id: str, message_id: str, config: Config) -> bool:
    groups = config.num_response_groups
    if groups == 1:  # under 128 participants: everyone answers (and every delivery asks this)
        return True
    return hash64(self_id, message_id) % groups == hash64(sender_id, message_id) % groups


class Responses:
    """SDS-R, answering: the wire bytes of recent messages we may be asked
    to rebroadcast (``repair_cache_size`` of them and ``repair_cache_bytes``
    at most, the oldest let go first), and the rebroadcasts we have
    scheduled at ``T_resp``."""

    def __init__(self, config: Config, self_id: str) -> None:
        self.config, self._self_id = config, self_id
        self.cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = 0
        self.due: Schedule[str] = Schedule()
        self._dirty: set[str] = set()  # scheduled responses changed since the last take

    def remember(self, message_id: str, sender_id: str, wire: bytes, own: bool) -> None:
        """A delivered message: keep its bytes if we would answer for it."""
        if own or is_responder(self._self_id, sender_id, message_id, self.config):
            self.keep(message_id, wire)

    def keep(self, message_id: str, wire: bytes) -> None:
        old = self.cache.pop(message_id, None)
        self._cache_bytes += len(wire) - len(old or b"")
        self.cache[message_id] = wire
        config = self.config
        while len(self.cache) > config.repair_cache_size or self._cache_bytes > config.repair_cache_bytes:
            _, dropped = self.cache.popitem(last=False)
            self._cache_bytes -= len(dropped)

    def asked(self, message_id: str, sender_id: str | None, now: int) -> None:
        """Someone asked for ``message_id``: answer at T_resp if it is ours to."""
        if message_id in self.due or message_id not in self.cache or not sender_id:
            return
        if is_responder(self._self_id, sender_id, message_id, self.config):
            self.due.set(message_id, response_at(now, self._self_id, sender_id, message_id, self.config))
            self._dirty.add(message_id)

    def seen(self, message_id: str) -> None:
        """Someone rebroadcast it (or sent it): nobody needs to answer."""
        if message_id in self.due:
            self.due.discard(message_id)
            self._dirty.add(message_id)

    def pop_due(self, now: int) -> list[tuple[str, bytes]]:
        due = self.due.pop_due(now)
        self._dirty.update(due)
        return [(mid, self.cache[mid]) for mid in due if mid in self.cache]

    # ----------------------------------------------------------- persistence
    # A store keeps ``responses`` entry by entry (``_dirty`` until
    # ``mark_saved``); the cache only when it keeps no log of its own.

    def export(self) -> dict[str, dict[str, int]]:
        """``{"responses": message id -> when to rebroadcast it}``."""
        return {"responses": dict(self.due.items())}

    def changes(self) -> dict[str, dict[str, int | None]]:
        """The entries changed since ``mark_saved``, if any, shaped as ``export``; None: gone."""
        return {"responses": {mid: self.due.get(mid) for mid in self._dirty}} if self._dirty else {}

    def mark_saved(self) -> None:
        self._dirty.clear()

    def export_cache(self) -> list[list]:
        """The cached messages, ``[message id, wire]``, oldest first."""
        return [[mid, wire] for mid, wire in self.cache.items()]

    def restore(self, saved: dict[str, dict[str, int]]) -> None:
        """Back to what ``export`` gave (the cache is refilled by ``keep`` or ``remember``)."""
        for mid, at in saved["responses"].items():
            self.due.set(mid, at)
