"""Sealed direct datagrams: encrypted to one person's X25519 key, from another's.

Every direct-message datagram (an MVDS payload, or a typing notice) is
sealed on its own, with a fresh ephemeral X25519 key, to the recipient's
identity exchange key, and bound to the sender's identity exchange key. It
is the "auth" mode of HPKE (RFC 9180) built from the same parts::

    e              a new X25519 key pair, for this datagram only
    dh_e  = X25519(e, R)            R: the recipient's exchange key
    dh_s  = X25519(S, R)            S: the sender's exchange key
    key   = HKDF-SHA256(ikm = dh_e | dh_s, salt = e.public,
                        info = "sds-chat sealed v1" | S_sign | R_sign)
    wire  = 0x01 | e.public (32) | ChaCha20-Poly1305(key, nonce = 0, plaintext,
                                                     aad = S_sign | R_sign)

(``S_sign`` and ``R_sign`` are the two Ed25519 identity keys.) The key is
used for one datagram only, so the fixed nonce never repeats under a key.
The result is then signed in an ordinary envelope (``Kind.MVDS``) by the
sender, which every receiver checks before it decrypts.

What this gives:

- confidentiality: only the holder of R's private key reads a datagram;
  a third member of any channel, or anyone on the wire, sees ciphertext;
- authentication: the envelope's Ed25519 signature, and ``dh_s`` (only S or
  R can compute it), so a datagram that opens came from S, to R;
- integrity: Poly1305, and the signature over the ciphertext;
- forward secrecy against the *sender's* key: someone who later steals S's
  key file cannot read what S sent (``dh_e`` needs e, thrown away, or R's key);
- no forward secrecy against the *recipient's* key: whoever steals R's key
  file can read every captured datagram sent to R, past and future. (A
  ratchet, or Noise's interactive handshakes, would fix that; they need both
  sides online, and a direct message must reach someone who is away.)
- no hiding of who talks to whom: the envelope names the signer, and the
  datagram goes to the recipient's address. Replays are harmless: MVDS
  drops a message it delivered already, and an ack or offer repeated
  changes nothing.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .envelope import EnvelopeError
from .keys import Identity

__all__ = ["OVERHEAD", "open_sealed", "seal_to"]

_VERSION = 1
_INFO = b"sds-chat sealed v1"
_NONCE = bytes(12)
OVERHEAD = 1 + 32 + 16
"""Bytes sealing adds: version, ephemeral key, tag."""


def _key(dh_e: bytes, dh_s: bytes, ephemeral: bytes, sender_sign: bytes, recipient_sign: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral,
                info=_INFO + sender_sign + recipient_sign).derive(dh_e + dh_s)


def _exchange(private: X25519PrivateKey, public: bytes) -> bytes:
    try:
        return private.exchange(X25519PublicKey.from_public_bytes(public))
    except ValueError:  # a low-order point: no shared secret
        raise EnvelopeError("bad_key", "the exchange key gives no shared secret") from None


def seal_to(sender: Identity, recipient_sign: bytes, recipient_exchange: bytes, plaintext: bytes) -> bytes:
    """``plaintext`` sealed from ``sender`` to the holder of ``recipient_exchange``."""
    ephemeral = X25519PrivateKey.generate()
    ephemeral_public = ephemeral.public_key().public_bytes_raw()
    key = _key(_exchange(ephemeral, recipient_exchange), _exchange(sender.exchange_key, recipient_exchange),
               ephemeral_public, sender.public_key, recipient_sign)
    aad = sender.public_key + recipient_sign
    return bytes((_VERSION,)) + ephemeral_public + ChaCha20Poly1305(key).encrypt(_NONCE, plaintext, aad)


def open_sealed(recipient: Identity, sender_sign: bytes, sender_exchange: bytes, data: bytes) -> bytes:
    """The plaintext of a datagram ``sender`` sealed to ``recipient``; raises ``EnvelopeError``."""
    if len(data) < OVERHEAD + 1:
        raise EnvelopeError("truncated", f"a sealed datagram of {len(data)} bytes")
    if data[0] != _VERSION:
        raise EnvelopeError("version", f"sealed datagram version {data[0]} is not {_VERSION}")
    ephemeral_public = data[1:33]
    key = _key(_exchange(recipient.exchange_key, ephemeral_public),
               _exchange(recipient.exchange_key, sender_exchange),
               ephemeral_public, sender_sign, recipient.public_key)
    try:
        return ChaCha20Poly1305(key).decrypt(_NONCE, data[33:], sender_sign + recipient.public_key)
    except InvalidTag:
        raise EnvelopeError("undecryptable", "a sealed datagram that is not for us, or was altered") from None
