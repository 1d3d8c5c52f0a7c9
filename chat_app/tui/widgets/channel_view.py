"""The channel's history, drawn with Textual's line API.

Only visible lines are rendered. Each entry is wrapped once per width and
cached; cumulative line offsets map a screen row to its entry by bisection.
The view follows new messages only while scrolled to the bottom, marks where
unseen messages begin, and asks for older history when scrolled near the top.
"""

from __future__ import annotations

import itertools
import time
from bisect import bisect_right

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chat_app.tui.model import ChannelModel, Entry, mentions, nick_colour

GLYPHS = {"sending": "○", "unacknowledged": "○", "possibly_acknowledged": "◐", "acknowledged": "●"}
LOAD_WHEN_WITHIN = 10  # lines from the top
NICK_WIDTH = 10


class ChannelView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    ChannelView {
        height: 1fr;
        padding: 0 1;
        overflow-x: hidden;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
    }
    """

    class NeedOlder(Message):
        """Scrolled near the top of what is loaded: load an older page."""

        def __init__(self, channel: str) -> None:
            super().__init__()
            self.channel = channel

    def __init__(self, my_nick: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ChannelModel | None = None
        self.my_nick = my_nick
        self.marker_id: str | None = None  # first message not yet seen
        self.search_term: str | None = None
        self.search_hit: str | None = None
        self._cache: dict[tuple, list[Strip]] = {}
        self._offsets: list[int] = [0]
        self._width = 0
        self._asked_older = False
        self._following = True  # the user's intent: stay at the newest message

    # ------------------------------------------------------------ layout

    def show(self, model: ChannelModel) -> None:
        """Switch to another channel, at its newest messages."""
        self.model = model
        self.marker_id = None
        self.search_term = self.search_hit = None
        self._asked_older = False
        self.relayout()
        self.follow()

    @property
    def following(self) -> bool:
        """Stay at the bottom as messages arrive? True until the user scrolls
        up, and again once they scroll back down."""
        return self._following

    def follow(self) -> None:
        """Scroll to the newest message once the new layout is in place.

        Forced, and checked again after the refresh: a scroll issued before
        layout has enabled vertical scrolling is otherwise dropped, leaving a
        "following" view stuck at the top."""
        self._following = True
        self.scroll_end(animate=False, force=True)
        self.call_after_refresh(self._settle_at_end)

    def _settle_at_end(self) -> None:
        if self._following and self.scroll_y < self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def relayout(self, anchor: tuple[str, int] | None = None) -> None:
        """Recompute line offsets. ``anchor`` - (message id, the line it was on,
        from ``line_of`` before the model changed) - keeps that message where
        it was on screen when older history is prepended above it."""
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        if width != self._width:
            self._cache.clear()
            self._width = width
        heights = (len(self._lines(e)) for e in (self.model.entries if self.model is not None else ()))
        self._offsets = [0, *itertools.accumulate(heights)]
        self.virtual_size = Size(width, self._offsets[-1])
        if anchor is not None:
            message_id, before = anchor
            after = self.line_of(message_id)
            if after is not None:
                self.scroll_to(y=self.scroll_y + after - before, animate=False, immediate=True)
        self.refresh()

    def line_of(self, message_id: str) -> int | None:
        """The first line of a message in the current layout."""
        if self.model is None or message_id not in self.model.by_id:
            return None
        index = self.model.index(message_id)
        return self._offsets[index] if index < len(self._offsets) else None

    def on_resize(self) -> None:
        self.relayout()
        if self._following:
            self.follow()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._following = new >= self.max_scroll_y - 1
        if (self.model is not None and new <= LOAD_WHEN_WITHIN and not self.model.history_complete
                and not self._asked_older and len(self.model)):
            self._asked_older = True
            self.post_message(self.NeedOlder(self.model.name))

    def older_loaded(self) -> None:
        self._asked_older = False

    def scroll_to_message(self, message_id: str) -> None:
        line = self.line_of(message_id)
        if line is not None:
            self._following = False
            self.scroll_to(y=max(0, line - self.size.height // 2), animate=False)

    # --------------------------------------------------------- rendering

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.size.width
        if self.model is None or line >= self._offsets[-1]:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._offsets, line) - 1
        strips = self._lines(self.model.entries[index])
        strip = strips[line - self._offsets[index]]
        return strip.apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

    def _lines(self, entry: Entry) -> list[Strip]:
        marker = entry.message_id == self.marker_id
        hit = self.search_term if entry.message_id == self.search_hit else None
        key = (entry.message_id, entry.version, marker, hit, self._width)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._cache[key] = self._render_entry(entry, marker, hit)
        return strips

    def _render_entry(self, entry: Entry, marker: bool, hit: str | None) -> list[Strip]:
        width = self._width or 80
        strips: list[Strip] = []
        if entry.gaps:
            noun = "message" if entry.gaps == 1 else "messages"
            strips.append(_rule(f" {entry.gaps} earlier {noun} could not be retrieved ", width, "red dim"))
        if marker:
            strips.append(_rule(" new messages ", width, "bold magenta"))
        head, body = self._head(entry), self._body(entry)
        if hit:
            body.highlight_words([hit], style="reverse", case_sensitive=False)
        console = self.app.console
        indent = Text(" " * (head.cell_len - 2) + "│ ", style="dim")
        lines = body.wrap(console, max(10, width - head.cell_len)) or [Text("")]
        for i, line in enumerate(lines):
            row = Text.assemble(head if i == 0 else indent, line)
            if mentions(entry.text, self.my_nick) and not entry.own:
                row.stylize("on #3a2d00")
            strips.append(Strip(row.render(console, end="")))
        return strips

    def _head(self, entry: Entry) -> Text:
        """Time, then the nick right-aligned in its column, then a rule."""
        stamp = time.strftime("%H:%M", time.localtime(entry.time_ms / 1000)) if entry.time_ms else "--:--"
        head = Text(f"{stamp} ", style="dim")
        nick = entry.nick if len(entry.nick) <= NICK_WIDTH else entry.nick[: NICK_WIDTH - 1] + "…"
        if entry.kind == "me":
            head.append(" " * (NICK_WIDTH - 1) + "*", style="bold")
        else:
            head.append(nick.rjust(NICK_WIDTH), style=f"bold {nick_colour(entry.sender_id)}")
        head.append(" │ ", style="dim")
        return head

    def _body(self, entry: Entry) -> Text:
        style = "dim italic" if entry.waiting_for else ""
        body = Text(style=style)
        if entry.kind == "me":
            body.append(entry.nick, style=f"bold {nick_colour(entry.sender_id)}")
            body.append(" ")
            body.append(entry.text, style="italic")
        else:
            body.append(entry.text)
        if not entry.own and mentions(entry.text, self.my_nick):
            body.highlight_words([self.my_nick], style="bold yellow", case_sensitive=False)
        if entry.waiting_for:
            noun = "message" if entry.waiting_for == 1 else "messages"
            body.append(f"  (waiting for {entry.waiting_for} earlier {noun}…)", style="yellow italic")
        if entry.own and entry.ack:
            peers = f" {entry.peers}" if entry.peers else ""
            tone = "green" if entry.ack == "acknowledged" else "yellow" if entry.ack.startswith("possibly") else "dim"
            body.append(f"  {GLYPHS[entry.ack]}{peers}", style=tone)
        return body


def _rule(label: str, width: int, style: str) -> Strip:
    side = max(0, (width - len(label)) // 2)
    line = "─" * side + label + "─" * max(0, width - side - len(label))
    return Strip([Segment(line, Style.parse(style))])
