"""Chunks of a file as they travel: read, sealed, hashed, checked, opened.

A file travels in chunks of ``chunk_size`` bytes, the last one shorter. In a
private channel or direct conversation each chunk is sealed with the file's
key (ChaCha20-Poly1305, the chunk's index as the nonce): sealing is
deterministic, so every holder serves the same bytes and one list of chunk
hashes - the manifest, whose SHA-256 is the offer's root - checks them all,
at any peer, before anything is opened or written. These functions do file
I/O and hashing: they run on worker threads, never on the event loop.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

AAD = b"sds-chat/file-chunk"
HASH = 32


class ChunkError(ValueError):
    """A chunk that is not the one the manifest names."""


@dataclass(frozen=True, slots=True)
class Described:
    """What hashing a file found: its size, SHA-256 and travelling chunks' hashes."""

    size: int
    sha256: str
    manifest: bytes

    @property
    def root(self) -> str:
        return manifest_root(self.manifest)


def manifest_root(manifest: bytes) -> str:
    return hashlib.sha256(manifest).hexdigest()


def seal(key: bytes | None, index: int, data: bytes) -> bytes:
    return data if key is None else ChaCha20Poly1305(key).encrypt(index.to_bytes(12, "big"), data, AAD)


def describe(path: Path, chunk_size: int, key: bytes | None) -> Described:
    """Hash ``path`` in one streaming pass (never all of it in memory)."""
    whole, hashes, size = hashlib.sha256(), [], 0
    with open(path, "rb") as f:
        for index, data in enumerate(iter(lambda: f.read(chunk_size), b"")):
            whole.update(data)
            hashes.append(hashlib.sha256(seal(key, index, data)).digest())
            size += len(data)
    return Described(size, whole.hexdigest(), b"".join(hashes))


def read_chunk(path: Path, index: int, chunk_size: int, key: bytes | None) -> bytes:
    with open(path, "rb") as f:
        f.seek(index * chunk_size)
        return seal(key, index, f.read(chunk_size))


def check_and_write(fd: int, manifest: bytes, index: int, data: bytes, chunk_size: int,
                    key: bytes | None) -> None:
    """Check a received chunk against the manifest, open it and write it in
    place in the partial file ``fd``; ``ChunkError`` when it is not the chunk."""
    if hashlib.sha256(data).digest() != manifest[index * HASH:(index + 1) * HASH]:
        raise ChunkError(f"chunk {index} does not match its hash")
    if key is not None:
        try:
            data = ChaCha20Poly1305(key).decrypt(index.to_bytes(12, "big"), data, AAD)
        except InvalidTag:
            raise ChunkError(f"chunk {index} does not open with the file's key") from None
    os.pwrite(fd, data, index * chunk_size)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while data := f.read(1 << 20):
            digest.update(data)
    return digest.hexdigest()
