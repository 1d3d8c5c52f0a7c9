"""A peer's identity: an Ed25519 signing key and an X25519 key, in one file.

The signing key says who wrote a datagram; the X25519 key is for direct
messages (a shared secret with one other member). Both live in
``identity.key`` in the data directory:

    offset  size  field
         0     8  magic  b"SDSKEY1\\n"   (format version 1)
         8    32  Ed25519 private key (the RFC 8032 seed)
        40    32  X25519 private key

The file is created with mode 0600 in one step (``O_CREAT | O_EXCL`` with
that mode, never a chmod afterwards) and published with a hard link, so a
reader never sees a half-written file and two processes starting at once
agree on one key. A key file that anyone but its owner can read is refused:
the key may already have leaked, and saying so beats signing with it.

``sender_id`` is derived from the public signing key, so it is
self-certifying: nobody can claim an id without holding the key behind it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

__all__ = [
    "KEY_FILE", "Identity", "KeyFileError", "fingerprint", "load_or_create_identity", "sender_id_of",
]

KEY_FILE = "identity.key"
_MAGIC = b"SDSKEY1\n"
_FILE_SIZE = len(_MAGIC) + 64
SENDER_ID_BYTES = 16


class KeyFileError(Exception):
    """The identity key file cannot be used; the message is one line for the user."""


def sender_id_of(public_key: bytes) -> str:
    """The SDS ``sender_id`` of a public signing key: 32 lowercase hex characters.

    The first 16 bytes of SHA-256(public key). 32 hex characters is what ids
    are today, so nothing in the wire format, the store or the UI changes
    length, and the id travels in every causal-history entry, where every byte
    counts. 128 bits is enough because nobody can pick an id: claiming
    someone's id means finding a second key with the same hash prefix, a
    2^128 search (a birthday collision between two keys of one's own, 2^64,
    gains an attacker nothing).
    """
    return hashlib.sha256(public_key).digest()[:SENDER_ID_BYTES].hex()


def fingerprint(public_key: bytes) -> str:
    """What two people read to each other to compare keys: ``"3f2a 9c01 77be d40e 5b19"``.

    80 bits in five groups of four hex digits: short enough to read aloud,
    long enough that nobody can make a key matching someone's fingerprint.
    Its first group doubles as the short suffix that tells two equal nicks apart.
    """
    digest = hashlib.sha256(b"sds-chat fingerprint\x00" + public_key).hexdigest()[:20]
    return " ".join(digest[i:i + 4] for i in range(0, 20, 4))


@dataclass(frozen=True, eq=False)
class Identity:
    """The private keys of this data directory and what is derived from them."""

    signing_key: Ed25519PrivateKey
    exchange_key: X25519PrivateKey

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate(), X25519PrivateKey.generate())

    @classmethod
    def from_bytes(cls, data: bytes) -> Identity:
        if len(data) != _FILE_SIZE or not data.startswith(_MAGIC):
            raise KeyFileError("not an sds-chat identity key file (wrong size or magic)")
        body = data[len(_MAGIC):]
        return cls(Ed25519PrivateKey.from_private_bytes(body[:32]), X25519PrivateKey.from_private_bytes(body[32:]))

    def to_bytes(self) -> bytes:
        return _MAGIC + self.signing_key.private_bytes_raw() + self.exchange_key.private_bytes_raw()

    @property
    def public_key(self) -> bytes:
        """The 32-byte public signing key: what envelopes carry and ids come from."""
        return self._public[0]

    @property
    def exchange_public_key(self) -> bytes:
        return self._public[1]

    @property
    def sender_id(self) -> str:
        return sender_id_of(self.public_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def sign(self, data: bytes) -> bytes:
        return self.signing_key.sign(data)

    @property
    def _public(self) -> tuple[bytes, bytes]:
        # Deriving a public key costs a scalar multiplication; every datagram asks.
        cached = self.__dict__.get("_public_cache")
        if cached is None:
            cached = (self.signing_key.public_key().public_bytes_raw(),
                      self.exchange_key.public_key().public_bytes_raw())
            object.__setattr__(self, "_public_cache", cached)
        return cached


def load_or_create_identity(data_dir: Path) -> Identity:
    """The identity of ``data_dir``, created on first use. Raises ``KeyFileError``."""
    path = Path(data_dir) / KEY_FILE
    try:
        return _load(path)
    except FileNotFoundError:
        pass
    identity = Identity.generate()
    try:
        created = _publish(path, identity.to_bytes())
    except OSError as exc:
        raise KeyFileError(f"cannot create {path}: {exc.strerror}") from None
    return identity if created else _load(path)  # else another process made it first: use theirs


def read_owner_only(path: Path, limit: int, leaked: str) -> bytes:
    """Up to ``limit`` bytes of a file only its owner may read (a key file);
    ``leaked``: what to do if it may have leaked. Raises ``FileNotFoundError``,
    or ``KeyFileError`` with the one-line reason."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise KeyFileError(f"cannot open {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise KeyFileError(f"{path} is not a regular file")
        if mode & 0o077:
            raise KeyFileError(f"{path} is readable by others (mode {stat.S_IMODE(mode):04o}); "
                               f"if it may have leaked, {leaked}, else run: chmod 600 {path}")
        return os.read(fd, limit)
    finally:
        os.close(fd)


def _load(path: Path) -> Identity:
    data = read_owner_only(path, _FILE_SIZE + 1, "delete it to make a new identity")
    try:
        return Identity.from_bytes(data)
    except KeyFileError as exc:
        raise KeyFileError(f"{path}: {exc}") from None


def _publish(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` with mode 0600, atomically; False if ``path`` exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # unlike rename, never replaces a key someone else just made
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink()
