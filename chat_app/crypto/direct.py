"""Direct messages: a private channel of two, keyed by X25519 instead of a passphrase.

Each identity has an X25519 key beside its signing key. Its public half is
published in a signed statement (``Kind.EXCHANGE_KEY``: CBOR
``["sds-chat/x25519", public key]``), so a peer learns it from the same
signature that proves who the sender is - an unsigned exchange key could be
anyone's, and a message encrypted to it would be read by whoever made it.

Both sides compute the same 32-byte secret::

    HKDF-SHA256(X25519(mine, theirs), salt = the two signing keys, sorted,
                info = "sds-chat direct v1")

and use it as the secret of a ``ChannelKey``: a direct conversation is sealed,
encrypted, tagged and opened exactly as a private channel is, so outsiders
see neither who talks nor what is said, only a tag. Static keys on both
sides mean no forward secrecy: whoever later steals either key file can
read the conversation's past.
"""

from __future__ import annotations

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .channel import ChannelKey
from .envelope import EnvelopeError, Kind, Opened, seal
from .keys import Identity

__all__ = ["direct_key", "exchange_key_statement", "read_exchange_key"]

_TAG = "sds-chat/x25519"


def exchange_key_statement(identity: Identity) -> bytes:
    """A signed envelope publishing ``identity``'s X25519 public key."""
    return seal(identity, Kind.EXCHANGE_KEY, cbor2.dumps([_TAG, identity.exchange_public_key]))


def read_exchange_key(opened: Opened) -> bytes:
    """The X25519 public key an opened ``Kind.EXCHANGE_KEY`` envelope publishes for its signer."""
    if opened.kind is not Kind.EXCHANGE_KEY:
        raise EnvelopeError("kind", f"a {opened.kind.name} envelope publishes no exchange key")
    try:
        tag, public_key = cbor2.loads(opened.payload)
    except Exception:  # cbor2 raises many types on hostile input; all mean the same here
        raise EnvelopeError("malformed", "not an exchange-key statement") from None
    if tag != _TAG or not isinstance(public_key, bytes) or len(public_key) != 32:
        raise EnvelopeError("malformed", "not an exchange-key statement")
    return public_key


def direct_key(identity: Identity, their_signing_key: bytes, their_exchange_key: bytes) -> ChannelKey:
    """The key of the direct conversation between ``identity`` and the other person."""
    if their_signing_key == identity.public_key:
        raise ValueError("a direct conversation needs two people")
    try:
        shared = identity.exchange_key.exchange(X25519PublicKey.from_public_bytes(their_exchange_key))
    except ValueError:  # a low-order point: OpenSSL refuses a shared secret of zeros
        raise EnvelopeError("bad_key", "the exchange key gives no shared secret") from None
    first, second = sorted((identity.public_key, their_signing_key))
    secret = HKDF(algorithm=hashes.SHA256(), length=32, salt=first + second, info=b"sds-chat direct v1").derive(shared)
    return ChannelKey(f"direct:{first.hex()[:8]}-{second.hex()[:8]}", secret)
