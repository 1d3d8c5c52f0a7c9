"""Moving a data directory from the old random-secret identity to keys.

Before keys, a peer's identity was a random 32-byte secret in its SQLite
``meta`` table, and its sender id was ``SHA-256("sds-chat peer id\\0" |
secret)``, cut to 32 hex characters. Nothing signed those ids, so nothing
can be re-signed: old messages keep their old sender ids and stay what they
were, readable history from an unauthenticated past.

What can be shown is continuity. The old id is a hash of the secret, and
only its owner ever knew the secret, so revealing it proves who made the id.
``migrate_identity`` builds a rekey statement - old id, old secret, new key -
that its owner sends signed with the new key (``Kind.REKEY``); a receiver
checks it with ``verify_rekey`` and may then show the old and the new id as
one person. Once revealed, the secret has no other use: the caller deletes
it and keeps only the statement, to announce again to peers met later.

The reveal has one weakness, stated plainly: whoever sees the statement
first could race it, re-signing the same secret with a key of their own to
peers that have not yet heard the real one. Receivers keep the first
statement they verify for an old id; the owner announces on start, before
anyone else can know the secret.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import cbor2

from .keys import Identity, sender_id_of

__all__ = ["Rekey", "RekeyError", "legacy_sender_id", "migrate_identity", "verify_rekey"]

_TAG = "sds-chat/rekey"


class RekeyError(Exception):
    """A rekey statement does not hold; the message is one line."""


def legacy_sender_id(secret: bytes) -> str:
    """The sender id the old identity scheme derived from ``secret``."""
    return hashlib.sha256(b"sds-chat peer id\x00" + secret).hexdigest()[:32]


@dataclass(frozen=True)
class Rekey:
    """Old identity to new: the statement to announce, signed (``Kind.REKEY``)."""

    old_sender_id: str
    new_sender_id: str
    statement: bytes


def migrate_identity(old_secret: bytes, identity: Identity) -> Rekey:
    """The rekey from the legacy ``old_secret`` to ``identity``. Pure: no I/O, no clock.

    The store calls it once, when it finds a legacy secret and no rekey
    recorded: it saves ``statement``, deletes the secret, and leaves every
    stored message as it is.
    """
    if len(old_secret) != 32:
        raise ValueError("a legacy identity secret is 32 bytes")
    statement = cbor2.dumps([_TAG, old_secret, identity.public_key])
    return Rekey(legacy_sender_id(old_secret), identity.sender_id, statement)


def verify_rekey(statement: bytes, signer_public_key: bytes) -> Rekey:
    """Check a rekey statement that arrived in an envelope signed by ``signer_public_key``."""
    try:
        tag, secret, public_key = cbor2.loads(statement)
    except Exception as exc:  # cbor2 raises many types on hostile input; all mean the same here
        raise RekeyError(f"malformed rekey statement ({exc.__class__.__name__})") from None
    if tag != _TAG or not isinstance(secret, bytes) or len(secret) != 32:
        raise RekeyError("malformed rekey statement")
    if public_key != signer_public_key:
        raise RekeyError("rekey statement names a key other than its signer's")
    return Rekey(legacy_sender_id(secret), sender_id_of(public_key), statement)
