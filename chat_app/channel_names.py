"""What a channel may be called: checked once, here, for ``/join``,
``--channel`` and ``serve`` alike.

A name is 1 to ``MAX_LENGTH`` ASCII letters, digits, ``-``, ``_`` and
``.``, given with or without a leading ``#``. The limit keeps ``#name``
and its unread count on one line of the sidebar, and far below what the
SDS engine takes as a channel id (256 characters); the characters are
ones every terminal draws one column wide and that cannot be mistaken for
the commas separating channels in a discovery record.
"""

from __future__ import annotations

import re

MAX_LENGTH = 24
_NAME = re.compile(r"[A-Za-z0-9._-]+")


class BadChannelName(ValueError):
    """The one-line reason a name is refused."""


def channel_name(text: str) -> str:
    """The channel ``text`` names (``#general`` or ``general``: ``general``),
    or ``BadChannelName``."""
    name = text.strip().removeprefix("#")
    if not name:
        raise BadChannelName("a channel needs a name: #name")
    if len(name) > MAX_LENGTH:
        raise BadChannelName(f"channel name too long ({len(name)} characters; at most {MAX_LENGTH})")
    if not _NAME.fullmatch(name):
        bad = next(c for c in name if not _NAME.fullmatch(c))
        raise BadChannelName(f"{bad!r} is not allowed in a channel name (letters, digits, - _ . only)")
    return name
