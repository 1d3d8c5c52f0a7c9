"""The secrets of the private channels joined here, so that a restart
rejoins them without their passphrase.

Each is the 32-byte secret derived from the channel's name and passphrase
(``chat_app.crypto.derive_channel_key``) - never the passphrase, which may
open other things too. They live in ``channel-keys`` next to ``identity.key``
in the data directory, one ``name hex-secret`` line each, under the same
rules: the file is written with mode 0600 from its creation (``O_CREAT |
O_EXCL`` with that mode, then renamed over the old one, so a reader never
sees half of it) and refused if anyone but its owner may read it, since the
secrets may have leaked. Whoever reads this file reads the channels, as
whoever reads ``identity.key`` can write as us. Only the process holding the
data directory's lock writes it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from chat_app.crypto.keys import KeyFileError, read_owner_only

FILE = "channel-keys"
_MAGIC = "SDSCHANNELKEYS1"


MAX_BYTES = 1 << 20
"""Far more than the channels one peer joins (a line is under 100 bytes)."""


class ChannelKeys:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE

    def load(self) -> dict[str, bytes]:
        """Channel name -> its secret; empty if there is no file. Raises ``KeyFileError``."""
        try:
            data = read_owner_only(self.path, MAX_BYTES, "delete it (the channels then need their passphrase)")
        except FileNotFoundError:
            return {}
        head, *lines = data.decode("ascii", errors="replace").splitlines() or [""]
        if head != _MAGIC:
            raise KeyFileError(f"{self.path} is not a channel key file")
        found = {}
        for line in lines:
            name, _, secret = line.partition(" ")
            try:
                found[name] = bytes.fromhex(secret)
            except ValueError:
                raise KeyFileError(f"{self.path}: the line for #{name} is damaged") from None
        return found

    def save(self, keys: dict[str, bytes]) -> None:
        """Write ``keys`` (channel name -> secret) in place of what the file held."""
        text = "".join(f"{name} {secret.hex()}\n" for name, secret in sorted(keys.items()))
        tmp = self.path.with_name(f".{FILE}.{secrets.token_hex(8)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, f"{_MAGIC}\n{text}".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
