"""What a change of the client's state asks of the screen.

The functions that change the state (``reducer``, ``channels``,
``presence``, ``history``, ``direct``) return a list of these instead of
touching a widget: ``Changed`` names the parts of the screen to draw again
from the state (the widgets watching them do), the others are what the
state cannot do itself - a toast, the bell, a page to read from the store,
the history view to move. The chat screen carries them out in order. Plain
values: nothing here knows Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Flag, auto

from chat_app.commands import NodeCommand
from chat_app.tui.model import ChannelModel, MessageRow

Key = tuple[int, str]  # a message's place in the log: (lamport, message id)


class Aspect(Flag):
    """A part of the screen drawn from the state, watched by the widgets that draw it."""

    SIDEBAR = auto()  # the channels and direct conversations, their unread counts, which is current
    MEMBERS = auto()  # who is in the current channel, and how they are
    TYPING = auto()  # who is typing in the current channel
    TOPIC = auto()  # the current channel's topic
    STATUS = auto()  # peers, catch-up, messages waiting for history
    NICK = auto()  # our nick
    TITLE = auto()  # the current channel's name, in the title bar
    SWITCHED = SIDEBAR | MEMBERS | TYPING | TOPIC | TITLE  # another channel is current


@dataclass(frozen=True, slots=True)
class Changed:
    aspects: Aspect


@dataclass(frozen=True, slots=True)
class Toast:
    message: str
    severity: str = "information"
    title: str = ""
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class Mentioned:
    """Someone mentioned us or a highlight word: the bell and a desktop notification, as the settings allow."""

    channel: str
    nick: str
    text: str


@dataclass(frozen=True, slots=True)
class Bell:
    pass


@dataclass(frozen=True, slots=True)
class SaveSettings:
    pass


@dataclass(frozen=True, slots=True)
class ReadPage:
    """Read a page of ``channel`` from the store: the newest, or the one older than ``before``."""

    channel: str
    before: Key | None = None


@dataclass(frozen=True, slots=True)
class ReadConversations:
    """Read the direct conversations the store holds."""


@dataclass(frozen=True, slots=True)
class Run:
    """Run ``command`` on the node, as if the user had typed it."""

    command: NodeCommand


# The history view: it shows the current channel's model, and is told what changed in it.

@dataclass(frozen=True, slots=True)
class Show:
    """Show ``model`` (now current) where the reader left it, the "new messages"
    rule above ``marker``; ``left``: the channel it showed, whose place to keep."""

    model: ChannelModel
    marker: str | None
    left: str | None


@dataclass(frozen=True, slots=True)
class Placed:
    """``row`` was added to the current channel, or ``replaced`` its earlier self."""

    row: MessageRow
    replaced: bool


@dataclass(frozen=True, slots=True)
class Follow:
    """Scroll to the newest message."""


@dataclass(frozen=True, slots=True)
class Unseen:
    """The first message the reader has not seen: the "new messages" rule goes
    above it, unless the rule is already shown."""

    message_id: str


@dataclass(frozen=True, slots=True)
class Relayout:
    """Rows came or went anywhere: measure them all again (then ``follow``);
    ``relabel``: how nicks are shown changed (a key verified, a nick shared),
    so draw every row again too."""

    follow: bool = False
    relabel: bool = False


@dataclass(frozen=True, slots=True)
class OlderPlaced:
    """An older page was put in: ``added`` rows, all above what was loaded
    (``on_top``) or not; ``anchor``: the row that was first, to keep in place."""

    added: int
    on_top: bool
    anchor: str | None


Effect = (Changed | Toast | Mentioned | Bell | SaveSettings | ReadPage | ReadConversations | Run | Show | Placed
          | Follow | Unseen | Relayout | OlderPlaced)
