"""Where each message of a channel's history falls, in lines, at one width.

The ``ChannelView`` says what to show (its model, the "new messages" marker,
the search hit); this part says where it goes. Each entry is wrapped once per
width and cached; its height is measured without wrapping when its text fits
on one line; cumulative line offsets map a line to its entry by bisection.
It is kept up to date piece by piece: a message arriving at the end costs the
same with 100 or 100,000 messages loaded.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from typing import Protocol

from textual.strip import Strip

from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.widgets.message_lines import UTC_OFFSET_S, MessageRenderer, day_label, day_of, text_width


class Shown(Protocol):
    """What the view says is to be shown (``ChannelView``)."""

    model: ChannelModel | None
    marker_id: str | None
    search_term: str | None
    search_hit: str | None
    renderer: MessageRenderer


class HistoryLayout:
    def __init__(self, view: Shown) -> None:
        self.view = view
        self.width = 0
        self.heights: list[int] = []  # lines per entry, in model order
        self.offsets: list[int] = [0]  # first line of each entry, then the total
        self._cache: dict[tuple, list[Strip]] = {}  # wrapped entries
        self._measured: dict[tuple, int] = {}  # their heights

    @property
    def lines_total(self) -> int:
        return self.offsets[-1]

    @property
    def text_width(self) -> int:
        return text_width(self.width or 80)

    def set_width(self, width: int) -> bool:
        """Forget every wrapped entry when the width changed; True if it did."""
        if width == self.width:
            return False
        self._cache.clear()
        self._measured.clear()
        self.width = width
        return True

    def forget_measures(self) -> None:
        self._measured.clear()

    def forget_drawn(self) -> None:
        """Every row is drawn again: how nicks are shown changed."""
        self._cache.clear()
        self._measured.clear()

    # ------------------------------------------------------------- changes

    def measure_all(self) -> None:
        model = self.view.model
        self.heights = self._measure_run(0, len(model)) if model is not None else []
        self.offsets_from(0)

    def placed(self, index: int, replaced: bool) -> None:
        """The entry at ``index`` is new, or ``replaced`` its earlier self."""
        if replaced:
            self.heights[index] = self._height(index)
        else:
            self.heights.insert(index, self._height(index))
        if index + 1 < len(self.heights):  # the next row may now start a day, or no longer
            self.heights[index + 1] = self._height(index + 1)
        self.offsets_from(index)

    def prepended(self, count: int) -> None:
        self.heights[:0] = self._measure_run(0, count)
        if count < len(self.heights):  # what was the first row may lose its day rule
            self.heights[count] = self._height(count)
        self.offsets_from(0)

    def offsets_from(self, start: int) -> None:
        """Recompute line offsets from entry ``start`` onwards."""
        self.offsets[start:] = itertools.accumulate(self.heights[start:], initial=self.offsets[start])

    # ------------------------------------------------------------- lookups

    def line_of(self, index: int) -> int | None:
        return self.offsets[index] if index < len(self.offsets) else None

    def index_at(self, line: int) -> int:
        return bisect_right(self.offsets, line) - 1

    def lines(self, index: int) -> list[Strip]:
        """Entry ``index`` wrapped, with its rules and search highlight."""
        view = self.view
        entry = view.model.entries[index]
        marker, day = self._decor(entry, view.model.entries[index - 1] if index else None)
        hit = view.search_term if entry.message_id == view.search_hit else None
        key = (entry.message_id, entry.version, marker, day, hit, self.width)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._cache[key] = view.renderer.render(entry, self.width or 80, marker, day, hit)
        return strips

    # ----------------------------------------------------------- measuring

    def _decor(self, row: MessageRow, before: MessageRow | None) -> tuple[bool, str | None]:
        """(the "new messages" rule above ``row``?, its day rule or None);
        ``before``: the row above it."""
        day = day_of(row.time_ms)
        starts_day = day is not None and (before is None or day_of(before.time_ms) != day)
        return row.message_id == self.view.marker_id, day_label(row.time_ms) if starts_day else None

    def _measure_run(self, start: int, stop: int) -> list[int]:
        """Heights of rows ``start`` to ``stop``, walking the list once and
        carrying the day of the row above (this loop is most of a relayout)."""
        entries = self.view.model.entries
        marker_id = self.view.marker_id
        above = day_of(entries[start - 1].time_ms) if start > 0 else None
        heights = []
        for index, row in enumerate(entries.islice(start, stop), start):
            ms = row.time_ms
            day = (ms // 1000 + UTC_OFFSET_S) // 86_400 if ms > 0 else None  # day_of, inlined
            label = day_label(ms) if day is not None and day != above else None
            above = day
            heights.append(self._height_of(index, row, row.message_id == marker_id, label))
        return heights

    def _height(self, index: int) -> int:
        entries = self.view.model.entries
        row = entries[index]
        return self._height_of(index, row, *self._decor(row, entries[index - 1] if index else None))

    def _height_of(self, index: int, row: MessageRow, marker: bool, day: str | None) -> int:
        """Lines row ``index`` takes (a search hit only changes colours). Text
        that fits on one line, as most chat lines do, is measured without
        being wrapped, which keeps measuring a long history after a resize cheap."""
        key = (row.message_id, row.version, marker, day, self.width)
        height = self._measured.get(key)
        if height is None:
            height = self.view.renderer.height(row, self.width or 80, marker, day)
            if height is None:
                height = len(self.lines(index))
            self._measured[key] = height
        return height
