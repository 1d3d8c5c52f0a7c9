"""A peer's identity: the signing key in its data directory, and the legacy secret.

The SDS ``sender_id`` is derived from the public signing key
(``chat_app.crypto.sender_id_of``), so it is self-certifying: nobody can
claim an id without the key. The key lives in ``identity.key`` next to the
database, mode 0600 (``chat_app.crypto.keys``).

Data directories from before keys hold a random secret in the database's
``meta`` table, and their sender id was a hash of it (``peer_id``).
``load_identity`` migrates such a directory once: it creates the key,
records the rekey statement (which proves the old id and the new key are one
person), and deletes the secret. Stored messages are not touched: the old
ones keep their old sender id and stay readable history.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from chat_app.crypto import Identity, KeyFileError, load_or_create_identity, migrate_identity
from chat_app.crypto.keys import KEY_FILE


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def peer_id(secret: bytes) -> str:
    """The legacy sender id of a secret: 32 hex characters."""
    return hashlib.sha256(b"sds-chat peer id\x00" + secret).hexdigest()[:32]


def load_identity(store, data_dir: Path | None = None) -> Identity:
    """The identity of the data directory holding ``store`` (created, or
    migrated from the legacy secret, on first use). Raises ``KeyFileError``."""
    identity = load_or_create_identity(data_dir if data_dir is not None else Path(store.path).parent)
    legacy = store.keys.legacy_secret()
    if legacy is not None:
        store.keys.retire_secret(migrate_identity(legacy, identity).statement)
    return identity


def stored_sender_id(store, data_dir: Path) -> str:
    """The sender id of ``data_dir``, read without writing anything (``export``
    on a directory the user may only read): its key's, or the legacy secret's
    in a directory no peer has started on since keys came. Raises ``KeyFileError``."""
    if (data_dir / KEY_FILE).exists():
        return load_or_create_identity(data_dir).sender_id  # it exists: only read
    legacy = store.keys.legacy_secret()
    if legacy is None:
        raise KeyFileError(f"no identity in {data_dir} ({KEY_FILE} is missing)")
    return peer_id(legacy)
