"""What this peer keeps about keys, in the ``meta`` table: the identity
secret of a data directory from before keys (until it is migrated), the
rekey statement that replaced it, the tags of the private channels it
joined (never their keys) and the fingerprints the user checked (``/trust``).
"""

from __future__ import annotations

import sqlite3

from chat_app.identity import new_secret


class Keys:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _meta(self, key: str) -> bytes | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: bytes) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def secret(self) -> bytes:
        """The identity secret of a data directory from before keys, created
        on first use and never changed (tests make such directories)."""
        secret = self._meta("secret")
        if secret is None:
            self._conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)", (new_secret(),))
            secret = self._meta("secret")
        return secret

    def legacy_secret(self) -> bytes | None:
        """The identity secret of a data directory from before keys, if it
        has not been migrated yet (``chat_app.identity.load_identity``)."""
        if self._meta("rekey") is not None:
            return None
        return self._meta("secret")

    def retire_secret(self, rekey_statement: bytes) -> None:
        """The secret has moved to a key: keep the statement that says so, drop the secret."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._set_meta("rekey", rekey_statement)
            self._conn.execute("DELETE FROM meta WHERE key = 'secret'")
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def private_tag(self, channel: str) -> bytes | None:
        """The tag of ``channel`` if it was joined as a private channel (never its key)."""
        return self._meta(f"private:{channel}")

    def private_tags(self) -> dict[str, bytes]:
        """Every channel joined as a private one, and its tag."""
        return {key.removeprefix("private:"): tag for key, tag in self._conn.execute(
            "SELECT key, value FROM meta WHERE key LIKE 'private:%'")}

    def set_private_tag(self, channel: str, tag: bytes | None) -> None:
        if tag is None:
            self._conn.execute("DELETE FROM meta WHERE key = ?", (f"private:{channel}",))
        else:
            self._set_meta(f"private:{channel}", tag)

    def trusted(self, nick: str) -> str | None:
        """The fingerprint the user checked for ``nick`` (``/trust``), compact hex."""
        value = self._meta(f"trust:{nick}")
        return value.decode() if value is not None else None

    def set_trusted(self, nick: str, fingerprint: str) -> None:
        self._set_meta(f"trust:{nick}", fingerprint.encode())

    def trusted_fingerprints(self) -> set[str]:
        """Every fingerprint the user checked, whatever nick it goes by now (compact hex)."""
        return {value.decode() for (value,) in self._conn.execute(
            "SELECT value FROM meta WHERE key LIKE 'trust:%'")}

    def rekey_statement(self) -> bytes | None:
        return self._meta("rekey")
