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
import stat
from pathlib import Path

FILE = "channel-keys"
_MAGIC = "SDSCHANNELKEYS1"


class ChannelKeyFileError(ValueError):
    """The file cannot be used; the one-line reason."""


class ChannelKeys:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE

    def load(self) -> dict[str, bytes]:
        """Channel name -> its secret; empty if there is no file. Raises ``ChannelKeyFileError``."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ChannelKeyFileError(f"cannot open {self.path}: {exc.strerror}") from None
        with os.fdopen(fd, "r", encoding="ascii", errors="replace") as file:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise ChannelKeyFileError(f"{self.path} is not a regular file")
            if mode & 0o077:
                raise ChannelKeyFileError(
                    f"{self.path} is readable by others (mode {stat.S_IMODE(mode):04o}): private channels need "
                    f"their passphrase again; if it may have leaked, delete it, else run: chmod 600 {self.path}")
            head, *lines = file.read().splitlines()
        if head != _MAGIC:
            raise ChannelKeyFileError(f"{self.path} is not a channel key file")
        found = {}
        for line in lines:
            name, _, secret = line.partition(" ")
            try:
                found[name] = bytes.fromhex(secret)
            except ValueError:
                raise ChannelKeyFileError(f"{self.path}: the line for #{name} is damaged") from None
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
