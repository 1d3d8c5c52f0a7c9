"""Every slash command, in one table, and a typed value for each.

``COMMANDS`` is the single source of names and usage: help, Tab completion
and the command palette come from it, for the terminal client and headless
mode alike.

``parse(line, surface)`` turns a line the user typed into one frozen value -
``Say`` for a message, ``Join``, ``Part``, ``Msg``, ... for a command, or
``Invalid`` with a one-line reason - checked once, here: the command exists
on that surface, its arguments are there, a channel's name is allowed. It
does none of it. ``Node.execute`` runs the values that act on the node, for
both surfaces; each surface keeps only its own (the client's help, export
and quit; headless's quit).

A value's ``line`` is what the user would type for it: it parses back to
the same value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from chat_app.channel_names import SVS_MARK, BadChannelName, channel_name, channel_spec

Surface = Literal["tui", "headless"]
BOTH: tuple[Surface, ...] = ("tui", "headless")


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of the command table."""

    name: str                       # without the slash
    usage: str                      # as shown in help: "/join #name"
    help: str                       # what it does, one line
    argument: Literal["none", "required", "optional"] = "none"
    surfaces: tuple[Surface, ...] = BOTH
    palette: str | None = None      # the palette's title for it, if it has an entry there

    @property
    def slash(self) -> str:
        return f"/{self.name}"

    @property
    def prefills(self) -> bool:
        """Chosen from the palette, a command that needs an argument is put
        in the input line for the user to finish; the others run at once."""
        return self.argument == "required"


COMMANDS: tuple[Entry, ...] = (
    Entry("join", "/join #name", "join a channel (and switch to it); `/join #name passphrase`: a private one",
          "required", palette="Join a channel"),
    Entry("part", "/part [#name]", "leave the current channel (or #name); in a conversation: close it", "optional",
          palette="Leave this channel"),
    Entry("nick", "/nick name", "change your nick", "required", palette="Change nick"),
    Entry("me", "/me waves", "an action", "required", palette="Action"),
    Entry("topic", "/topic [text]", "show the channel's topic, or set it for everyone", "optional",
          palette="Topic"),
    Entry("away", "/away [reason]", "tell the channels you are away (alone: back)", "optional",
          palette="Away / back"),
    Entry("ignore", "/ignore [nick]", "hide a person's messages, whatever nick they take (again: show them); "
          "alone: list", "optional", palette="Ignore a person"),
    Entry("msg", "/msg nick text", "a direct message: end-to-end encrypted, delivered when they are back",
          "required", palette="Direct message"),
    Entry("query", "/query nick", "open a direct conversation with nick (and switch to it)", "required",
          palette="Direct conversation"),
    Entry("typing", "/typing", "tell the channel you are typing", surfaces=("headless",)),
    Entry("reply", "/reply N text", "answer message N, quoting it (N counts back from the newest: 1 or -1 is the "
          "last)", "required"),
    Entry("react", "/react N emoji", "react to message N (again: take it back)", "required"),
    Entry("edit", "/edit N text", "change the text of your message N, for everyone", "required"),
    Entry("delete", "/delete N", "delete your message N, for everyone", "required"),
    Entry("peers", "/peers", "who is on the network", palette="Peers"),
    Entry("whois", "/whois nick", "who uses a nick: key fingerprint, addresses, first and last seen", "required",
          palette="Who is…"),
    Entry("trust", "/trust nick fingerprint", "you compared their fingerprint: mark them verified", "required"),
    Entry("invite", "/invite nick #channel", "send nick the key of a private channel you are in, sealed to them; "
          "they join it only if they choose to", "required", palette="Invite to a private channel"),
    Entry("names", "/names", "who is in this channel, as lines here", surfaces=("tui",), palette="Names"),
    Entry("list", "/list", "the channels announced on this network, with their members and protocol",
          surfaces=("tui",), palette="List channels"),
    Entry("window", "/window N", "go to the sidebar's Nth channel (as Alt+N does)", "required", surfaces=("tui",)),
    Entry("buffer", "/buffer N", "the same as /window N", "required", surfaces=("tui",)),
    Entry("lastlog", "/lastlog text", "the messages of this channel holding text, as lines here", "required",
          surfaces=("tui",), palette="Last log"),
    Entry("clear", "/clear", "clear this channel's view (its history stays stored)", surfaces=("tui",),
          palette="Clear the view"),
    Entry("close", "/close", "leave this channel, or close this conversation", surfaces=("tui",)),
    Entry("export", "/export [file]", "write this peer's history (Parquet, or `.jsonl`)", "optional",
          surfaces=("tui",), palette="Export history"),
    Entry("send", "/send PATH", "offer a file to this channel or conversation (its bytes stay here)", "required",
          palette="Send a file"),
    Entry("accept", "/accept [N]", "fetch file offer N (alone: the latest)", "optional", palette="Accept a file"),
    Entry("files", "/files", "the files offered, and how their transfers stand", palette="Files"),
    Entry("help", "/help", "this screen", surfaces=("tui",), palette="Help"),
    Entry("quit", "/quit", "leave"),
)
BY_NAME = {c.name: c for c in COMMANDS}


def commands_for(surface: Surface) -> tuple[Entry, ...]:
    return tuple(c for c in COMMANDS if surface in c.surfaces)


# ------------------------------------------------------------------ the values


@dataclass(frozen=True, slots=True)
class Invalid:
    """Not a command: the one-line reason."""

    reason: str


@dataclass(frozen=True, slots=True)
class Command:
    """A line the user typed, as a value: what to do, checked, not yet done."""

    word: ClassVar[str] = ""  # its name in ``COMMANDS``

    @classmethod
    def parsed(cls, argument: str) -> Command | Invalid:
        """The value for ``/word argument`` (``argument`` stripped, "" when
        none; present when the table requires one). Most take no argument,
        or the whole of it as their one field (None when there is none)."""
        return cls(argument or None) if fields(cls) else cls()

    @property
    def line(self) -> str:
        """What the user types for it: the word, then each field given."""
        return " ".join([f"/{self.word}", *(v for v in (getattr(self, f.name) for f in fields(self)) if v)])


def _first(argument: str) -> tuple[str, str]:
    """(the first word, what follows it, stripped)."""
    word, _, rest = argument.partition(" ")
    return word, rest.strip()


_LEADING_AT = re.compile(r"^[@\s]+")


def _person(word: str) -> str:
    """A nick or ``@id`` as typed, without the ``@`` (and any space) in front."""
    return _LEADING_AT.sub("", word)


def _needs(word: str, what: str) -> Invalid:
    return Invalid(f"/{word} needs {what}: {BY_NAME[word].usage}")


@dataclass(frozen=True, slots=True)
class Say(Command):
    """A message to the current channel: plain text (``//`` escapes a
    leading slash), or an action (``/me waves``: ``kind`` "me")."""

    word: ClassVar[str] = "me"
    text: str
    kind: str = "text"

    @classmethod
    def parsed(cls, argument: str) -> Say:
        return cls(argument, "me")

    @property
    def line(self) -> str:
        if self.kind == "me":
            return f"/me {self.text}"
        return f"/{self.text}" if self.text.startswith("/") else self.text


@dataclass(frozen=True, slots=True)
class Join(Command):
    """Join ``channel`` (private with a ``passphrase``; on State Vector Sync
    when new and ``svs``) and make it the current one."""

    word: ClassVar[str] = "join"
    channel: str
    passphrase: str | None = None
    svs: bool = False

    @classmethod
    def parsed(cls, argument: str) -> Join | Invalid:
        name, passphrase = _first(argument)  # the passphrase may hold spaces
        try:
            channel, protocol = channel_spec(name)
        except BadChannelName as exc:
            return Invalid(str(exc))
        return cls(channel, passphrase or None, protocol == "svs")

    @property
    def spec(self) -> str:
        """The name with the protocol's mark, as ``--channel`` takes it."""
        return self.channel + SVS_MARK if self.svs else self.channel

    @property
    def line(self) -> str:
        return f"/join #{self.spec}" + (f" {self.passphrase}" if self.passphrase else "")


@dataclass(frozen=True, slots=True)
class Part(Command):
    """Leave ``channel``, or the current one (None)."""

    word: ClassVar[str] = "part"
    channel: str | None = None

    @classmethod
    def parsed(cls, argument: str) -> Part | Invalid:
        if not argument:
            return cls()
        name, rest = _first(argument)
        if rest:
            return Invalid(f"/part takes one channel, not {rest!r} after it: {BY_NAME['part'].usage}")
        try:
            return cls(channel_name(name))
        except BadChannelName as exc:
            return Invalid(str(exc))

    @property
    def line(self) -> str:
        return f"/part #{self.channel}" if self.channel else "/part"


@dataclass(frozen=True, slots=True)
class Nick(Command):
    """Take a new nick (the runtime checks it against the wire rule)."""

    word: ClassVar[str] = "nick"
    name: str


@dataclass(frozen=True, slots=True)
class Topic(Command):
    """Set the current channel's topic, or (None) report it."""

    word: ClassVar[str] = "topic"
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Away(Command):
    """Tell the channels we are away for ``reason``, or (None) back."""

    word: ClassVar[str] = "away"
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Ignore(Command):
    """Ignore ``nick`` (or stop); None: just list who is ignored."""

    word: ClassVar[str] = "ignore"
    nick: str | None = None


@dataclass(frozen=True, slots=True)
class Msg(Command):
    """A direct message: ``target`` is a nick (a leading ``@`` is dropped) or ``@`` and an id."""

    word: ClassVar[str] = "msg"
    target: str
    text: str

    @classmethod
    def parsed(cls, argument: str) -> Msg | Invalid:
        target, text = _first(argument)
        target = _person(target)
        return cls(target, text) if target and text else _needs("msg", "a nick and text")


@dataclass(frozen=True, slots=True)
class Query(Command):
    """Open the direct conversation with ``target`` and make it the current one."""

    word: ClassVar[str] = "query"
    target: str

    @classmethod
    def parsed(cls, argument: str) -> Query | Invalid:
        target = _person(_first(argument)[0])
        return cls(target) if target else _needs("query", "a nick")


@dataclass(frozen=True, slots=True)
class Typing(Command):
    """Tell the current channel we are typing."""

    word: ClassVar[str] = "typing"


@dataclass(frozen=True, slots=True)
class Peers(Command):
    """Who is on the network (answered with a ``peers`` event)."""

    word: ClassVar[str] = "peers"


@dataclass(frozen=True, slots=True)
class Whois(Command):
    word: ClassVar[str] = "whois"
    nick: str

    @classmethod
    def parsed(cls, argument: str) -> Whois | Invalid:
        nick = _person(argument)
        return cls(nick) if nick else _needs("whois", "a nick")


@dataclass(frozen=True, slots=True)
class Trust(Command):
    """The user compared ``nick``'s key fingerprint with its holder (spaces in it are kept)."""

    word: ClassVar[str] = "trust"
    nick: str
    fingerprint: str

    @classmethod
    def parsed(cls, argument: str) -> Trust | Invalid:
        nick, fingerprint = _first(argument)
        nick = _person(nick)
        return cls(nick, fingerprint) if nick and fingerprint else _needs("trust", "a nick and a fingerprint")


@dataclass(frozen=True, slots=True)
class Invite(Command):
    """Hand ``nick`` the key of the private channel ``channel`` (they accept by joining it)."""

    word: ClassVar[str] = "invite"
    nick: str
    channel: str

    @classmethod
    def parsed(cls, argument: str) -> Invite | Invalid:
        nick, channel = _first(argument)
        nick, channel = _person(nick), channel.strip().removeprefix("#")
        if not nick or not channel or " " in channel:
            return _needs("invite", "a nick and a #channel")
        return cls(nick, channel)


@dataclass(frozen=True, slots=True)
class Export(Command):
    """Write the history to ``path`` (None: a dated file in the home directory)."""

    word: ClassVar[str] = "export"
    path: str | None = None


@dataclass(frozen=True, slots=True)
class Help(Command):
    word: ClassVar[str] = "help"


@dataclass(frozen=True, slots=True)
class Names(Command):
    word: ClassVar[str] = "names"


@dataclass(frozen=True, slots=True)
class ListChannels(Command):
    """``/list``: the channels announced on the network."""

    word: ClassVar[str] = "list"


@dataclass(frozen=True, slots=True)
class Window(Command):
    """Go to the sidebar's ``number``th channel, from 1."""

    word: ClassVar[str] = "window"
    number: int

    @classmethod
    def parsed(cls, argument: str) -> Window | Invalid:
        word = _first(argument)[0]
        if not (word.isascii() and word.isdigit() and int(word) > 0):
            return _needs(cls.word, "a channel's number, from 1")
        return cls(int(word))

    @property
    def line(self) -> str:
        return f"/{self.word} {self.number}"


@dataclass(frozen=True, slots=True)
class Buffer(Window):
    """``/buffer N``: what ``/window N`` does, as WeeChat calls it."""

    word: ClassVar[str] = "buffer"


@dataclass(frozen=True, slots=True)
class Lastlog(Command):
    """The current channel's messages holding ``text`` (any case)."""

    word: ClassVar[str] = "lastlog"
    text: str


@dataclass(frozen=True, slots=True)
class Clear(Command):
    word: ClassVar[str] = "clear"


@dataclass(frozen=True, slots=True)
class Close(Command):
    """Leave the current channel, or close the current conversation: ``/part`` alone."""

    word: ClassVar[str] = "close"


@dataclass(frozen=True, slots=True)
class About(Command):
    """A reply, reaction, edit or deletion of the message ``which`` picks in
    the current channel: how many back from the newest, as typed (``1`` or
    ``-1`` is the last), or its id (what the client's selection sends)."""

    which: str
    text: str = ""

    @classmethod
    def parsed(cls, argument: str) -> About | Invalid:
        which, text = _first(argument)
        if not (_BACK.fullmatch(which) and int(which) != 0 or _MESSAGE_ID.fullmatch(which)):
            return _needs(cls.word, "a message: how many back from the newest (1 is the last), or its id")
        if not text and cls.word != "delete":
            return _needs(cls.word, "text" if cls.word != "react" else "an emoji")
        return cls(which, text)

    @property
    def back(self) -> int | None:
        """How many messages back from the newest (1: the last); None when ``which`` is an id."""
        return abs(int(self.which)) if _BACK.fullmatch(self.which) else None


_BACK = re.compile(r"-?[0-9]{1,9}")
_MESSAGE_ID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Reply(About):
    word: ClassVar[str] = "reply"


@dataclass(frozen=True, slots=True)
class React(About):
    word: ClassVar[str] = "react"


@dataclass(frozen=True, slots=True)
class Edit(About):
    word: ClassVar[str] = "edit"


@dataclass(frozen=True, slots=True)
class Delete(About):
    word: ClassVar[str] = "delete"


@dataclass(frozen=True, slots=True)
class Quit(Command):
    word: ClassVar[str] = "quit"


@dataclass(frozen=True, slots=True)
class Send(Command):
    """Offer the file at ``path`` to the current channel or conversation."""

    word: ClassVar[str] = "send"
    path: str


@dataclass(frozen=True, slots=True)
class Accept(Command):
    """Fetch file offer ``number`` (None: the latest waiting)."""

    word: ClassVar[str] = "accept"
    number: int | None = None

    @classmethod
    def parsed(cls, argument: str) -> Accept | Invalid:
        if not argument:
            return cls()
        if not (argument.isascii() and argument.isdigit() and int(argument) > 0):
            return _needs(cls.word, "an offer's number, from 1 (/files lists them)")
        return cls(int(argument))

    @property
    def line(self) -> str:
        return f"/accept {self.number}" if self.number else "/accept"


@dataclass(frozen=True, slots=True)
class Files(Command):
    word: ClassVar[str] = "files"


VALUES: dict[str, type[Command]] = {c.word: c for c in (
    Say, Join, Part, Nick, Topic, Away, Ignore, Msg, Query, Typing, Peers, Whois, Trust, Invite,
    Reply, React, Edit, Delete, Send, Accept, Files,
    Names, ListChannels, Window, Buffer, Lastlog, Clear, Close, Export, Help, Quit)}
"""The value each entry of ``COMMANDS`` parses to, by name."""

NodeCommand = (Say | Join | Part | Nick | Topic | Away | Ignore | Msg | Query | Typing | Peers | Whois | Trust | Invite
               | Reply | React | Edit | Delete | Send | Accept | Files)
"""The commands that act on the node (``Node.execute``); the rest are each surface's own."""


def parse(line: str, surface: Surface) -> Command | Invalid:
    if not line.startswith("/") or line.startswith("//"):
        return Say(line[1:] if line.startswith("//") else line)
    word, _, argument = line[1:].partition(" ")
    argument = argument.strip()
    entry = BY_NAME.get(word)
    if entry is None or surface not in entry.surfaces:
        return Invalid(f"unknown command /{word}; see /help")
    if entry.argument == "required" and not argument:
        return _needs(word, "an argument")
    return VALUES[word].parsed(argument)


def complete(value: str, commands: tuple[str, ...], channels: list[str], nicks: list[str]) -> list[str]:
    """Every completion of ``value``'s last word, as whole new input values:
    a command at the start, a channel after ``#`` or ``/join``, else a nick."""
    head, _, word = value.rpartition(" ")
    prefix = f"{head} " if head else ""
    if not head and word.startswith("/"):
        return [f"{c} " for c in commands if c.startswith(word)]
    if word.startswith("#") or head == "/join":
        stem = word.lstrip("#").lower()
        return [f"{prefix}#{c} " for c in channels if c.lower().startswith(stem)]
    if not word:
        return []
    suffix = ": " if not head else " "
    return [f"{prefix}{n}{suffix}" for n in nicks if n.lower().startswith(word.lower())]


def help_table(surface: Surface) -> str:
    """The commands as a Markdown table, for the help screen."""
    rows = [f"| `{c.usage}` | {c.help} |" for c in commands_for(surface)]
    return "\n".join(["| command | what it does |", "|---|---|", *rows])
