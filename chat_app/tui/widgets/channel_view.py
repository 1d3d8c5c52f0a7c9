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
from bisect import bisect_right

from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.widgets.message_lines import (UTC_OFFSET_S, MessageRenderer, day_label, day_of, full_date,
                                                  text_width)
LOAD_WHEN_WITHIN = 10  # lines from the top


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
        self.renderer = MessageRenderer(my_nick)
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

    def show(self, model: ChannelModel, position: tuple[str, int] | None = None, marker: str | None = None) -> None:
        """Switch to another channel: at ``position`` (from ``position()``) if
        it is still loaded, else at the newest message; ``marker``: the first
        message not seen yet."""
        self.model = model
        self.marker_id = marker
        self.search_term = self.search_hit = None
        self._asked_older = False
        self.relayout()
        line = self.line_of(position[0]) if position is not None else None
        if line is None:
            self.follow()
        else:
            self._following = False
            self.scroll_to(y=line + position[1], animate=False, immediate=True, force=True)

    def position(self) -> tuple[str, int] | None:
        """Where the reader is, to come back to: None at the newest message,
        else (the message at the top of the screen, lines of it scrolled past)."""
        if self._following or self.model is None or not len(self.model):
            return None
        line = int(self.scroll_y)
        index = min(bisect_right(self._offsets, line) - 1, len(self.model) - 1)
        return self.model.entries[index].message_id, line - self._offsets[index]

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
        self._heights = self._measure_run(0, len(self.model)) if self.model is not None else []
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
            self._heights[index] = self._height(index)
        else:
            self._heights.insert(index, self._height(index))
        if index + 1 < len(self._heights):  # the next row may now start a day, or no longer
            self._heights[index + 1] = self._height(index + 1)
        self._offsets_from(index)

    def prepended(self, count: int, anchor: tuple[str, int] | None) -> None:
        """``count`` older entries were added above everything loaded."""
        if self._check_width() or self.model is None or len(self._heights) + count != len(self.model):
            self.relayout(anchor)
            return
        self._heights[:0] = self._measure_run(0, count)
        if count < len(self._heights):  # what was the first row may lose its day rule
            self._heights[count] = self._height(count)
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

    def row_at(self, y: int) -> MessageRow | None:
        """The message drawn on screen row ``y``."""
        line = self.scroll_offset.y + y
        if self.model is None or not 0 <= line < self._offsets[-1]:
            return None
        return self.model.entries[bisect_right(self._offsets, line) - 1]

    def on_click(self, event) -> None:
        """A click on a message tells its full date (the view shows hours only)."""
        row = self.row_at(event.y)
        if row is not None:
            self.notify(f"{row.nick}: {full_date(row.time_ms)}", title="sent")

    # --------------------------------------------------------- rendering

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.size.width
        if self.model is None or line >= self._offsets[-1]:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._offsets, line) - 1
        strips = self._lines(index)
        strip = strips[line - self._offsets[index]]
        return strip.apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

    def _decor(self, row: MessageRow, before: MessageRow | None) -> tuple[bool, str | None]:
        """(the "new messages" rule above ``row``?, its day rule or None);
        ``before``: the row above it."""
        day = day_of(row.time_ms)
        starts_day = day is not None and (before is None or day_of(before.time_ms) != day)
        return row.message_id == self.marker_id, day_label(row.time_ms) if starts_day else None

    def _measure_run(self, start: int, stop: int) -> list[int]:
        """Heights of rows ``start`` to ``stop``, walking the list once and
        carrying the day of the row above (this loop is most of a relayout)."""
        entries = self.model.entries
        marker_id = self.marker_id
        above = day_of(entries[start - 1].time_ms) if start > 0 else None
        heights = []
        for index, row in enumerate(entries.islice(start, stop), start):
            ms = row.time_ms
            day = (ms // 1000 + UTC_OFFSET_S) // 86_400 if ms > 0 else None  # day_of, inlined
            label = day_label(ms) if day is not None and day != above else None
            above = day
            heights.append(self._height_of(index, row, row.message_id == marker_id, label))
        return heights

    def _lines(self, index: int) -> list[Strip]:
        entry = self.model.entries[index]
        marker, day = self._decor(entry, self.model.entries[index - 1] if index else None)
        hit = self.search_term if entry.message_id == self.search_hit else None
        key = (entry.message_id, entry.version, marker, day, hit, self._width)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._cache[key] = self.renderer.render(entry, self._width or 80, marker, day, hit)
        return strips

    def _height(self, index: int) -> int:
        row = self.model.entries[index]
        return self._height_of(index, row, *self._decor(row, self.model.entries[index - 1] if index else None))

    def _height_of(self, index: int, row: MessageRow, marker: bool, day: str | None) -> int:
        """Lines row ``index`` takes (a search hit only changes colours). Text
        that fits on one line, as most chat lines do, is measured without
        being wrapped, which keeps measuring a long history after a resize cheap."""
        key = (row.message_id, row.version, marker, day, self._width)
        height = self._measured.get(key)
        if height is None:
            height = self.renderer.height(row, self._width or 80, marker, day)
            if height is None:
                height = len(self._lines(index))
            self._measured[key] = height
        return height

    @property
    def _text_width(self) -> int:
        return text_width(self._width or 80)

    @property
    def my_nick(self) -> str:
        return self.renderer.my_nick

    @my_nick.setter
    def my_nick(self, nick: str) -> None:
        self.renderer.my_nick = nick
