"""SDS-R timing and response groups, exactly as the extension defines them.

    T_req  = now + hash(self, msg_id) % (T_max - T_min) + T_min
    T_resp = now + (hash(self) XOR hash(sender)) * hash(msg_id) % T_max
    responder  iff  hash(self, msg_id) % G == hash(sender, msg_id) % G

The original sender's distance to itself is 0, so it answers first; everyone
else backs off pseudorandomly, and a rebroadcast seen first cancels the rest.
"""

from __future__ import annotations

from .config import Config
from .wire import hash64


def request_at(now: int, self_id: str, message_id: str, config: Config) -> int:
    span = config.repair_t_max_ms - config.repair_t_min_ms
    return now + hash64(self_id, message_id) % span + config.repair_t_min_ms


def response_at(now: int, self_id: str, sender_id: str, message_id: str, config: Config) -> int:
    distance = hash64(self_id) ^ hash64(sender_id)
    return now + distance * hash64(message_id) % config.repair_t_max_ms


def is_responder(self_id: str, sender_id: str, message_id: str, config: Config) -> bool:
    groups = config.num_response_groups
    return hash64(self_id, message_id) % groups == hash64(sender_id, message_id) % groups
