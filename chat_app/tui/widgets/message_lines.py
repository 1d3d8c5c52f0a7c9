"""How one message is drawn in the channel view: a day rule when it starts
a new day, the "new messages" rule, a note on lost history, then the time,
the nick right-aligned in its column and the text, wrapped under itself.
Join, part, quit and nick-change lines are dimmed, with an arrow for a nick.
URLs are terminal hyperlinks, and are never split across lines."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from chat_app.tui.model import MessageRow, highlight_pattern, highlighted, nick_colour

GLYPHS = {"sending": "○", "unacknowledged": "○", "possibly_acknowledged": "◐", "acknowledged": "●"}
NICK_WIDTH = 10
LEAD_INS = {"me": (" ", ""), "topic": (" set the topic: ", "dim")}  # between the nick and the text
LOCAL_STYLES = {"join": "dim green", "part": "dim red", "quit": "dim red", "error": "bold red"}  # the nick column
HEAD_WIDTH = len("00:00 ") + NICK_WIDTH + len(" │ ")  # time, nick, rule: every row's first columns
URL = re.compile(r"\bhttps?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")
# The local day of a timestamp by arithmetic, not a localtime() call per row:
# days are counted in the offset from UTC in force when the client started.
UTC_OFFSET_S = time.localtime().tm_gmtoff


def day_of(time_ms: int) -> int | None:
    return (time_ms // 1000 + UTC_OFFSET_S) // 86_400 if time_ms > 0 else None


def day_label(time_ms: int) -> str:
    day = time.localtime(time_ms / 1000)
    return f"{time.strftime('%A', day)} {day.tm_mday} {time.strftime('%B %Y', day)}"


def full_date(time_ms: int) -> str:
    return time.strftime("%A %d %B %Y, %H:%M:%S", time.localtime(time_ms / 1000)) if time_ms > 0 else "unknown"


class MessageRenderer:
    def __init__(self, my_nick: str = "", highlight_words: list[str] | None = None) -> None:
        self.my_nick = my_nick
        self.highlight_words = highlight_words or []  # besides my nick
        self.label: Callable[[str, str], str] = lambda peer_id, nick: nick  # (peer id, nick) -> the nick shown
        self.console = Console(width=1000, color_system="truecolor", legacy_windows=False)

    def height(self, row: MessageRow, width: int, marker: bool, day: str | None) -> int | None:
        """Lines ``row`` takes, when that is known without wrapping it (it
        fits on one line, as most chat lines do); else None."""
        if row.kind == "text" and not row.waiting_for and not (row.own and row.ack) and not row.reactions \
                and not row.edited:
            plain = row.text  # the common case, without building the parts
        else:
            parts = [*body_parts(row, self.label(row.sender_id, row.nick)), *mark_part(row)]
            plain = "".join(text for text, _ in parts)
        if "\n" in plain or cell_len(plain) > max(10, width - HEAD_WIDTH):
            return None
        return 1 + bool(row.gaps) + marker + (day is not None)

    def render(self, row: MessageRow, width: int, marker: bool, day: str | None, hit: str | None) -> list[Strip]:
        strips: list[Strip] = []
        if day is not None:
            strips.append(rule(f" {day} ", width, "bold"))
        if row.gaps:
            noun = "message" if row.gaps == 1 else "messages"
            strips.append(rule(f" {row.gaps} earlier {noun} could not be retrieved ", width, "red dim"))
        if marker:
            strips.append(rule(" new messages ", width, "bold magenta"))
        mentioned = not row.own and not row.is_local and highlighted(row.text, self.my_nick, self.highlight_words)
        head, body = self.head(row), self.body(row, mentioned)
        if hit:
            body.highlight_words([hit], style="reverse", case_sensitive=False)
        indent = Text(" " * (HEAD_WIDTH - 2) + "│ ", style="dim")
        for i, line in enumerate(with_mark(body.wrap(self.console, text_width(width)) or [Text("")], row, width)):
            assembled = Text.assemble(head if i == 0 else indent, line)
            if mentioned:
                assembled.stylize("on #3a2d00")
            strips.append(Strip(assembled.render(self.console, end="")))
        return strips

    def head(self, row: MessageRow) -> Text:
        """Time, then the nick right-aligned in its column, then a rule."""
        stamp = time.strftime("%H:%M", time.localtime(row.time_ms / 1000)) if row.time_ms else "--:--"
        head = Text(f"{stamp} ", style="dim")
        if row.kind == "me":
            nick = Text("*", style="bold")
        elif row.is_local:  # "-->" for a join, "<--" for a part or quit, "--" for a new nick or a notice
            nick = Text(row.nick, style=LOCAL_STYLES.get(row.kind, "dim"))
        elif row.kind == "topic":  # the setter's nick goes in the text: "bob set the topic: ..."
            nick = Text("--", style="dim")
        else:
            nick = Text(self.label(row.sender_id, row.nick), style=f"bold {nick_colour(row.sender_id)}")
            nick.truncate(NICK_WIDTH, overflow="ellipsis")
        nick.align("right", NICK_WIDTH)  # in cells: wide characters count twice
        head.append_text(nick)
        head.append(" │ ", style="dim")
        return head

    def body(self, row: MessageRow, mentioned: bool) -> Text:
        tone = "dim italic" if row.waiting_for else "red" if row.kind == "error" else "dim" if row.is_local else ""
        nick = self.label(row.sender_id, row.nick)
        body = Text.assemble(*body_parts(row, nick), style=tone)
        if mentioned:
            body.highlight_regex(highlight_pattern(self.my_nick, self.highlight_words), style="bold yellow")
        start = len(nick) + len(LEAD_INS[row.kind][0]) if row.kind in LEAD_INS else 0
        start += len(f"↪ {row.quote}\n") if row.kind == "reply" and row.quote else 0
        for url in URL.finditer(row.text):  # the text comes after the nick for /me and a topic
            body.stylize(Style(link=url.group(), underline=True), start + url.start(), start + url.end())
        return body


def text_width(width: int) -> int:
    return max(10, width - HEAD_WIDTH)


def body_parts(row: MessageRow, nick: str) -> list[tuple[str, str]]:
    """The text after the nick column, as (text, style) pieces: all that
    decides its length, without building it; ``nick``: the row's nick as
    shown (``bob~3f2a`` where two keys use it), for an action or a topic."""
    parts = [(f"↪ {row.quote}\n", "dim")] if row.kind == "reply" and row.quote else []
    if row.deleted:
        return [*parts, (row.text, "dim italic")]
    if row.kind in LEAD_INS:
        parts += [(nick, f"bold {nick_colour(row.sender_id)}"), LEAD_INS[row.kind],
                  (row.text, "italic" if row.kind == "me" else "")]
    else:
        parts.append((row.text, ""))
    if row.edited:
        parts.append(("  (edited)", "dim"))
    if row.reactions:
        parts.append((f"\n{row.reactions}", "cyan"))
    if row.waiting_for:
        noun = "message" if row.waiting_for == 1 else "messages"
        parts.append((f"  (waiting for {row.waiting_for} earlier {noun}…)", "yellow italic"))
    return parts


def mark_part(row: MessageRow) -> list[tuple[str, str]]:
    """The delivery mark of one of our messages (``  ● 2``), after its text."""
    if not (row.own and row.ack):
        return []
    peers = f" {row.peers}" if row.peers else ""
    tone = "green" if row.ack == "acknowledged" else "yellow" if row.ack.startswith("possibly") else "dim"
    return [(f"  {GLYPHS[row.ack]}{peers}", tone)]


def with_mark(lines: list[Text], row: MessageRow, width: int) -> list[Text]:
    """The wrapped ``lines`` with the delivery mark put after them whole: a
    word wrap would part "●" from its count. It goes on a line of its own
    when it does not fit beside the last."""
    for text, tone in mark_part(row):
        if cell_len(lines[-1].plain) + cell_len(text) <= text_width(width):
            lines[-1].append(text, tone)
        else:
            lines.append(Text(text.lstrip(), tone))
    return lines


def rule(label: str, width: int, style: str) -> Strip:
    side = max(0, (width - len(label)) // 2)
    line = "─" * side + label + "─" * max(0, width - side - len(label))
    return Strip([Segment(line, Style.parse(style))])
