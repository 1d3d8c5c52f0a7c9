"""Every slash command, in one table: parsing, validation, help text, Tab
completion and command-palette entries all come from ``COMMANDS``, for the
terminal client and headless mode alike.

``parse(line, surface)`` turns a line the user typed into what to do - a
message to send (``Say``), a command with its argument (``Invocation``), or a
one-line reason why not (``Invalid``) - without doing any of it: each
surface then acts on the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chat_app.channel_names import BadChannelName, channel_name, channel_spec

Surface = Literal["tui", "headless"]
BOTH: tuple[Surface, ...] = ("tui", "headless")


@dataclass(frozen=True, slots=True)
class Command:
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


COMMANDS: tuple[Command, ...] = (
    Command("join", "/join #name", "join a channel (and switch to it); `/join #name passphrase`: a private one",
            "required", palette="Join a channel"),
    Command("part", "/part", "leave the current channel", "optional", palette="Leave this channel"),
    Command("nick", "/nick name", "change your nick", "required", palette="Change nick"),
    Command("me", "/me waves", "an action", "required", palette="Action"),
    Command("topic", "/topic [text]", "show the channel's topic, or set it for everyone", "optional",
            palette="Topic"),
    Command("away", "/away [reason]", "tell the channels you are away (alone: back)", "optional",
            palette="Away / back"),
    Command("ignore", "/ignore [nick]", "hide a nick's messages here (again: show them); alone: list", "optional",
            palette="Ignore a nick"),
    Command("msg", "/msg nick text", "a direct message: end-to-end encrypted, delivered when they are back",
            "required", palette="Direct message"),
    Command("query", "/query nick", "open a direct conversation with nick (and switch to it)", "required",
            palette="Direct conversation"),
    Command("typing", "/typing", "tell the channel you are typing", surfaces=("headless",)),
    Command("peers", "/peers", "who is on the network", palette="Peers"),
    Command("whois", "/whois nick", "who uses a nick: key fingerprint, addresses, first and last seen", "required",
            palette="Who is…"),
    Command("trust", "/trust nick fingerprint", "you compared their fingerprint: mark them verified", "required"),
    Command("export", "/export [file]", "write this peer's history (Parquet, or `.jsonl`)", "optional",
            surfaces=("tui",), palette="Export history"),
    Command("help", "/help", "this screen", surfaces=("tui",), palette="Help"),
    Command("quit", "/quit", "leave"),
)
BY_NAME = {c.name: c for c in COMMANDS}


def commands_for(surface: Surface) -> tuple[Command, ...]:
    return tuple(c for c in COMMANDS if surface in c.surfaces)


@dataclass(frozen=True, slots=True)
class Say:
    """Plain text: a message to the current channel (``//`` escapes a leading slash)."""

    text: str
    kind: str = "text"


@dataclass(frozen=True, slots=True)
class Invocation:
    command: Command
    argument: str  # stripped; "" when none was given

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def channel(self) -> str:
        """The argument's first word read as a channel name (``#general`` or ``general``)."""
        return self.argument.partition(" ")[0].lstrip("#")

    @property
    def target(self) -> str:
        """The argument's first word read as a person (``/msg bob hi``: ``bob``)."""
        return self.argument.partition(" ")[0].lstrip("@")

    @property
    def text(self) -> str:
        """What follows the first word (``/msg bob hi``: ``hi``)."""
        return self.argument.partition(" ")[2].strip()

    @property
    def passphrase(self) -> str | None:
        """What follows the channel name: a private channel's passphrase (spaces kept), or None."""
        return self.argument.partition(" ")[2].strip() or None


@dataclass(frozen=True, slots=True)
class Invalid:
    reason: str


def parse(line: str, surface: Surface) -> Say | Invocation | Invalid:
    if not line.startswith("/") or line.startswith("//"):
        return Say(line[1:] if line.startswith("//") else line)
    word, _, argument = line[1:].partition(" ")
    argument = argument.strip()
    command = BY_NAME.get(word)
    if command is None or surface not in command.surfaces:
        return Invalid(f"unknown command /{word}; see /help")
    if command.argument == "required" and not argument:
        return Invalid(f"/{word} needs an argument: {command.usage}")
    if command.name == "me":
        return Say(argument, kind="me")
    if command.name == "msg" and not argument.partition(" ")[2].strip():
        return Invalid(f"/msg needs a nick and text: {command.usage}")
    if command.name in ("join", "part") and argument:
        try:  # after the name: a private channel's passphrase; /join's name may carry the SVS mark
            (channel_spec if command.name == "join" else channel_name)(argument.partition(" ")[0])
        except BadChannelName as exc:
            return Invalid(str(exc))
    return Invocation(command, argument)


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


def headless_summary() -> str:
    return ", ".join(f"``{c.usage}``" for c in commands_for("headless"))
