"""The channel's history, drawn with Textual's line API.

Only visible lines are rendered. Each entry is wrapped once per width and
cached; cumulative line offsets map a screen row to its entry by bisection.
The layout is kept up to date piece by piece: a message arriving at the end
costs the same with 100 or 100,000 messages loaded, and an entry's height is
measured without wrapping it when its text fits on one line.
The view follows new messages only while scrolled to the bottom, marks where
unseen messages begin, and asks for older history when scrolled near the top.
"""

from __future__ import annotations

import itertools
import time
from bisect import bisect_right

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chat_app.tui.model import ChannelModel, MessageRow, highlight_pattern, highlighted, nick_colour

GLYPHS = {"sending": "○", "unacknowledged": "○", "possibly_acknowledged": "◐", "acknowledged": "●"}
LOAD_WHEN_WITHIN = 10  # lines from the top
NICK_WIDTH = 10
HEAD_WIDTH = len("00:00 ") + NICK_WIDTH + len(" │ ")  # time, nick, rule: every entry's first columns


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

    class ReachedEnd(Message):
        """Scrolled back down to the newest message: everything is seen."""

        def __init__(self, channel: str) -> None:
            super().__init__()
            self.channel = channel

    def __init__(self, my_nick: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ChannelModel | None = None
        self.my_nick = my_nick
        self.highlight_words: list[str] = []  # besides my nick
        self.marker_id: str | None = None  # first message not yet seen
        self.search_term: str | None = None
        self.search_hit: str | None = None
        self._cache: dict[tuple, list[Strip]] = {}  # wrapped entries
        self._measured: dict[tuple, int] = {}  # their heights
        self._heights: list[int] = []  # lines per entry, in model order
        self._offsets: list[int] = [0]  # first line of each entry, then the total
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
        "following" view stuck at the top. Immediate, not queued: a queued
        scroll to the end would yank a reader who scrolled up meanwhile."""
        self._following = True
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)
        self.call_after_refresh(self._settle_at_end)

    def _settle_at_end(self) -> None:
        if self._following and self.scroll_y < self.max_scroll_y:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def relayout(self, anchor: tuple[str, int] | None = None) -> None:
        """Measure every entry again (a new channel or width, a search).
        ``anchor`` - (message id, the line it was on, from ``line_of`` before
        the model changed) - keeps that message where it was on screen."""
        self._check_width()
        self._heights = [self._height(e) for e in (self.model.entries if self.model is not None else ())]
        self._offsets_from(0, anchor)

    def placed(self, entry: MessageRow, replaced: bool) -> None:
        """``entry`` was added to the model, or ``replaced`` its earlier self
        (delivered after waiting, acknowledged; same place, maybe a new
        height): the layout changes from there on only."""
        if self._check_width() or self.model is None or len(self._heights) + (not replaced) != len(self.model):
            self.relayout()
            return
        index = self.model.index(entry.message_id)
        if replaced:
            self._heights[index] = self._height(entry)
        else:
            self._heights.insert(index, self._height(entry))
        self._offsets_from(index)

    def prepended(self, count: int, anchor: tuple[str, int] | None) -> None:
        """``count`` older entries were added above everything loaded."""
        if self._check_width() or self.model is None or len(self._heights) + count != len(self.model):
            self.relayout(anchor)
            return
        self._heights[:0] = [self._height(self.model.entries[i]) for i in range(count)]
        self._offsets_from(0, anchor)

    def set_marker(self, message_id: str | None) -> None:
        """Move the "new messages" rule (None removes it)."""
        old, self.marker_id = self.marker_id, message_id
        for changed in (old, message_id):
            if changed is not None and self.model is not None and changed in self.model.by_id:
                self.placed(self.model.by_id[changed], replaced=True)

    def _check_width(self) -> bool:
        """Forget every wrapped entry when the width changed; True if it did."""
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        if width == self._width:
            return False
        self._cache.clear()
        self._measured.clear()
        self._width = width
        return True

    def _offsets_from(self, start: int, anchor: tuple[str, int] | None = None) -> None:
        """Recompute line offsets from entry ``start`` onwards."""
        self._offsets[start:] = itertools.accumulate(self._heights[start:], initial=self._offsets[start])
        self.virtual_size = Size(self._width, self._offsets[-1])
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
        was_following, self._following = self._following, new >= self.max_scroll_y - 1
        if self._following and not was_following and self.model is not None:
            self.post_message(self.ReachedEnd(self.model.name))
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

    def _lines(self, entry: MessageRow) -> list[Strip]:
        marker = entry.message_id == self.marker_id
        hit = self.search_term if entry.message_id == self.search_hit else None
        key = (entry.message_id, entry.version, marker, hit, self._width)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._cache[key] = self._render_entry(entry, marker, hit)
        return strips

    def _height(self, entry: MessageRow) -> int:
        """Lines ``entry`` takes (a search hit only changes colours). Text that
        fits on one line, as most chat lines do, is measured without being
        wrapped, which keeps measuring a long history after a resize cheap."""
        marker = entry.message_id == self.marker_id
        key = (entry.message_id, entry.version, marker, self._width)
        height = self._measured.get(key)
        if height is None:
            plain = "".join(text for text, _ in _body_parts(entry))
            if "\n" in plain or cell_len(plain) > self._text_width:
                height = len(self._lines(entry))
            else:
                height = 1 + bool(entry.gaps) + marker
            self._measured[key] = height
        return height

    @property
    def _text_width(self) -> int:
        return max(10, (self._width or 80) - HEAD_WIDTH)

    def _render_entry(self, entry: MessageRow, marker: bool, hit: str | None) -> list[Strip]:
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
        indent = Text(" " * (HEAD_WIDTH - 2) + "│ ", style="dim")
        lines = body.wrap(console, self._text_width) or [Text("")]
        for i, line in enumerate(lines):
            row = Text.assemble(head if i == 0 else indent, line)
            if not entry.own and highlighted(entry.text, self.my_nick, self.highlight_words):
                row.stylize("on #3a2d00")
            strips.append(Strip(row.render(console, end="")))
        return strips

    def _head(self, entry: MessageRow) -> Text:
        """Time, then the nick right-aligned in its column, then a rule."""
        stamp = time.strftime("%H:%M", time.localtime(entry.time_ms / 1000)) if entry.time_ms else "--:--"
        head = Text(f"{stamp} ", style="dim")
        if entry.kind == "me":
            nick = Text("*", style="bold")
        else:
            nick = Text(entry.nick, style=f"bold {nick_colour(entry.sender_id)}")
            nick.truncate(NICK_WIDTH, overflow="ellipsis")
        nick.align("right", NICK_WIDTH)  # in cells: wide characters count twice
        head.append_text(nick)
        head.append(" │ ", style="dim")
        return head

    def _body(self, entry: MessageRow) -> Text:
        body = Text.assemble(*_body_parts(entry), style="dim italic" if entry.waiting_for else "")
        if not entry.own and highlighted(entry.text, self.my_nick, self.highlight_words):
            body.highlight_regex(highlight_pattern(self.my_nick, self.highlight_words), style="bold yellow")
        return body


def _body_parts(entry: MessageRow) -> list[tuple[str, str]]:
    """The text after the nick column, as (text, style) pieces: all that
    decides its length, without building it."""
    if entry.kind == "me":
        parts = [(entry.nick, f"bold {nick_colour(entry.sender_id)}"), (" ", ""), (entry.text, "italic")]
    else:
        parts = [(entry.text, "")]
    if entry.waiting_for:
        noun = "message" if entry.waiting_for == 1 else "messages"
        parts.append((f"  (waiting for {entry.waiting_for} earlier {noun}…)", "yellow italic"))
    if entry.own and entry.ack:
        peers = f" {entry.peers}" if entry.peers else ""
        tone = "green" if entry.ack == "acknowledged" else "yellow" if entry.ack.startswith("possibly") else "dim"
        parts.append((f"  {GLYPHS[entry.ack]}{peers}", tone))
    return parts


def _rule(label: str, width: int, style: str) -> Strip:
    side = max(0, (width - len(label)) // 2)
    line = "─" * side + label + "─" * max(0, width - side - len(label))
    return Strip([Segment(line, Style.parse(style))])
