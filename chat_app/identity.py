"""A peer's identity: a random secret kept in its data directory.

The SDS ``sender_id`` is derived from the secret and never changes for that
data directory, so a restarted peer is recognised as the same participant.
"""

from __future__ import annotations

import hashlib
import secrets


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def peer_id(secret: bytes) -> str:
    """32 hex characters: short enough to travel in every history entry."""
    return hashlib.sha256(b"sds-chat peer id\x00" + secret).hexdigest()[:32]
