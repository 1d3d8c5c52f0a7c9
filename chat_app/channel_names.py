"""What a channel may be called: checked once, here, for ``/join``,
``--channel`` and ``serve`` alike.

A name is 1 to ``MAX_LENGTH`` ASCII letters, digits, ``-``, ``_`` and
``.``, given with or without a leading ``#``: no control character, no
bidirectional override and nothing invisible can be part of one, so a name
is shown as it is wherever it goes (the wire rule of ``chat_app.payload``
asks less of nicks and text). The limit keeps ``#name``
and its unread count on one line of the sidebar, and far below what the
SDS engine takes as a channel id (256 characters); the characters are
ones every terminal draws one column wide and that cannot be mistaken for
the commas separating channels in a discovery record.

A channel runs on one sync protocol, chosen when it is created: SDS unless
the name ends in ``+svs`` (``/join #name+svs``, ``--channel name+svs``),
which makes it a State Vector Sync channel. ``+`` is never part of a name,
so the mark cannot be mistaken for one.
"""

from __future__ import annotations

import re

MAX_LENGTH = 24
_NAME = re.compile(r"[A-Za-z0-9._-]+")
_TAG = re.compile(r"~[0-9a-f]{32}")
PROTOCOLS = ("sds", "svs")
SVS_MARK = "+svs"


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


def is_link_name(text: str) -> bool:
    """Whether a peer may announce a channel as ``text``: a channel's name,
    or ``~`` and the 32 hex digits of a tag (a private channel, a mailbox).
    Anything else in an announcement is dropped: it would be shown in
    ``/list`` and ``/peers``, where a newline in it would make a line of its own."""
    return bool(_NAME.fullmatch(text) and len(text) <= MAX_LENGTH or _TAG.fullmatch(text))


def channel_spec(text: str) -> tuple[str, str | None]:
    """The channel ``text`` names and the protocol it asks for: ``"svs"``
    for ``#name+svs``, None for a plain name (whatever the channel already
    runs on, else SDS). Raises ``BadChannelName``."""
    name = text.strip()
    if name.endswith(SVS_MARK):
        return channel_name(name.removesuffix(SVS_MARK)), "svs"
    return channel_name(name), None
