"""Names for what peers announce and what a data directory holds, as a
person reads them.

A private channel is announced by its tag (``~`` and 32 hex digits), so is a
mailbox; a direct conversation is stored under ``@`` and the other person's
id. Where this data directory knows more - the private channels it joined,
the people it holds keys of - the name is shown (``#secret (private)``,
``mailbox of bob``, ``@bob``); the hex only where nothing is known.
Nicks come from peers: whoever shows a label shows it through ``inert``.
"""

from __future__ import annotations

from pathlib import Path

from chat_app.runtime.mailbox import MAILBOX_LINK, mailbox_tag
from chat_app.store import Store, StoreUnreadable, database_path


class LinkNames:
    def __init__(self, private: dict[str, str] | None = None, mailboxes: dict[str, str] | None = None,
                 nicks: dict[str, str] | None = None) -> None:
        self._private = private or {}  # "~tag" -> the channel's name
        self._mailboxes = mailboxes or {}  # "~tag" -> whose mailbox
        self._nicks = nicks or {}  # sender id -> nick

    @classmethod
    def of(cls, store) -> LinkNames:
        """What ``store`` knows: its private channels' tags, its correspondents' keys and nicks."""
        people = store.direct.peers()
        nicks = {p.peer_id: p.nick for p in people if p.nick}
        return cls(private={_link(tag): name for name, tag in store.keys.private_tags().items()},
                   mailboxes={_link(mailbox_tag(p.signing_key)): nicks.get(p.peer_id, p.peer_id[:12])
                              for p in people},
                   nicks=nicks)

    @classmethod
    def of_data_dir(cls, data_dir: Path) -> LinkNames:
        """What the data directory knows, read without writing; nothing if it cannot be read."""
        try:
            store = Store(database_path(data_dir), read_only=True)
        except StoreUnreadable:
            return cls()
        try:
            return cls.of(store)
        finally:
            store.close()

    def channel(self, link_name: str, owner_key: bytes | None = None) -> str:
        """An announced channel; ``owner_key``: the announcing peer's key (its own mailbox is named so)."""
        if not link_name.startswith("~"):
            return f"#{link_name}"
        if link_name in self._private:
            return f"#{self._private[link_name]} (private)"
        if link_name == MAILBOX_LINK:
            return "mailbox store"
        if owner_key is not None and link_name == _link(mailbox_tag(owner_key)):
            return "its mailbox"
        if link_name in self._mailboxes:
            return f"mailbox of {self._mailboxes[link_name]}"
        return f"#{link_name}"

    def conversation(self, channel: str) -> str:
        """A stored channel: ``#name``, or a direct conversation as ``@nick`` (``@`` and the id's start if unknown)."""
        if not channel.startswith("@"):
            return f"#{channel}"
        peer_id = channel[1:]
        return f"@{self._nicks.get(peer_id) or peer_id[:12] + '…'}"


def _link(tag: bytes) -> str:
    return f"~{tag.hex()}"
