"""A file offer: what a ``file`` chat message says about the bytes it names.

The offer travels as the message's text, the name on the first line(s) and
one line of facts after it::

    report.pdf
    sds-file 1048576 262144 <sha256 hex> <root hex> application/pdf [<key hex>]

size and chunk size in bytes, the SHA-256 of the whole file, the *root* - the
SHA-256 of the chunk hashes as the chunks travel, which names the file on the
wire - the media type, and in a private channel or direct conversation the
file's own ChaCha20-Poly1305 key (the message itself is encrypted there, so
only members learn it). The facts line is parsed strictly; the name is
whatever precedes it and is never trusted: it is saved through ``safe_name``
and shown through ``inert``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNK_SIZE = 256 * 1024
MAX_CHUNKS = 16384
"""A manifest of this many chunk hashes (512 KiB) still fits one frame."""

_FACTS = re.compile(
    r"sds-file (?P<size>[0-9]{1,16}) (?P<chunk>[0-9]{4,7}) (?P<sha256>[0-9a-f]{64}) (?P<root>[0-9a-f]{64}) "
    r"(?P<media>[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63})(?: (?P<key>[0-9a-f]{64}))?")


class OfferError(ValueError):
    """Text that is not a file offer."""


@dataclass(frozen=True, slots=True)
class FileOffer:
    name: str
    size: int
    chunk_size: int
    sha256: str
    root: str
    media: str
    key: bytes | None = None

    def __post_init__(self) -> None:
        if not 4096 <= self.chunk_size <= 512 * 1024 or self.chunk_size & (self.chunk_size - 1):
            raise OfferError(f"chunk size {self.chunk_size} is not a power of two from 4 KiB to 512 KiB")
        if self.chunks > MAX_CHUNKS:
            raise OfferError(f"a file of {self.size} bytes is more than {MAX_CHUNKS} chunks")
        if self.key is not None and len(self.key) != 32:
            raise OfferError("a file key is 32 bytes")

    @property
    def chunks(self) -> int:
        return -(-self.size // self.chunk_size)

    def plain_length(self, index: int) -> int:
        """The bytes of the file in chunk ``index`` (the last one is shorter)."""
        return min(self.chunk_size, self.size - index * self.chunk_size)

    @property
    def text(self) -> str:
        key = f" {self.key.hex()}" if self.key is not None else ""
        return (f"{self.name}\nsds-file {self.size} {self.chunk_size} {self.sha256} {self.root} "
                f"{self.media}{key}")

    @property
    def shown(self) -> str:
        """How the offer reads in a history: its name and size, not its facts line."""
        return f"[file] {self.name} ({megabytes(self.size)}, {self.media})"

    @classmethod
    def parse(cls, text: str) -> FileOffer:
        """The offer ``text`` makes, or ``OfferError``. A received ``file``
        message's text is parsed once, when its payload is decoded
        (``Payload.offer``), and the offer travels on with its delivery."""
        name, newline, facts = text.rpartition("\n")
        found = _FACTS.fullmatch(facts)
        if not newline or found is None:
            raise OfferError("a file message ends with a line 'sds-file size chunk sha256 root type [key]'")
        key = found["key"]
        return cls(name, int(found["size"]), int(found["chunk"]), found["sha256"], found["root"], found["media"],
                   bytes.fromhex(key) if key else None)


def megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size} bytes"


def stored_offer(kind: str | None, text: str | None) -> FileOffer | None:
    """The offer of a message read back from our own store (a page of history,
    a search): parsed again, since a row read in a later step has no decoded
    payload with it. None: not a ``file`` message, or one stored before offers
    were checked."""
    if kind != "file":
        return None
    try:
        return FileOffer.parse(text or "")
    except OfferError:
        return None
