"""The channel's history, drawn with Textual's line API.

Only visible lines are rendered; where each message falls, in lines, is
``HistoryLayout``'s business (kept up to date piece by piece, so a message
arriving at the end costs the same with 100 or 100,000 messages loaded).
The view follows new messages only while scrolled to the bottom, marks where
unseen messages begin, and asks for older history when scrolled near the top.

A message may be selected (Alt+Up from the input; the view then has the
focus): Up and Down move the selection, r replies, e edits, d deletes
(pressed twice), a reacts (a picker of common reactions), + reacts with +1,
Escape leaves; the chat screen carries these out (they end with the focus
elsewhere: see ``BINDINGS``). The selected message is drawn on a background
of its own.
"""

from __future__ import annotations

import textwrap

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chat_app.inert_text import inert
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.widgets.history_layout import HistoryLayout
from chat_app.tui.widgets.message_lines import MessageRenderer, full_date

LOAD_WHEN_WITHIN = 10  # lines from the top
SELECTED = Style(bgcolor="grey30")


def welcome(channel: str, nick: str) -> list[str]:
    """What an empty channel shows (the nick is inert, as the title shows it)."""
    return [f"Welcome to #{channel}, {inert(nick)}.",
            "What you write here goes to everyone in the channel.",
            "Others on this network appear in the member list as they are found: there is nothing to set up.",
            "/join #name opens another channel, /msg nick text writes to one person.",
            "F1: help (Esc closes it)."]


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

    # Priority bindings run while the app reads their key, before it hands on
    # the keys read after it in the same burst (fast typing, a slow link).
    # r, e, d, a, + and Escape end the picking and move the focus - to the
    # input, or the reaction picker - so the chat screen carries them out
    # there and then: left to run once the key had come back up to the app,
    # they would find the keys after them handed to this view already ("r"
    # then "yes" was an edit). Up and Down too, to keep their order with them.
    BINDINGS = [
        Binding("up", "select(-1)", "Previous message", show=False, priority=True),
        Binding("down", "select(1)", "Next message", show=False, priority=True),
        Binding("r", "screen.pick('reply')", "Reply", show=False, priority=True),
        Binding("e", "screen.pick('edit')", "Edit", show=False, priority=True),
        Binding("d", "screen.pick('delete')", "Delete", show=False, priority=True),
        Binding("a", "screen.pick('react')", "React", show=False, priority=True),
        Binding("plus", "screen.pick('+1')", "+1", show=False, priority=True),
        Binding("escape", "screen.leave_view", "Back to the input", show=False, priority=True),
    ]

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
        self.history_layout = HistoryLayout(self)
        self._asked_older = False
        self._following = True  # the user's intent: stay at the newest message
        self.positions: dict[str, tuple[str, int] | None] = {}  # where the reader left each channel
        self.selected: str | None = None  # the id of the message picked with the keys

    # ------------------------------------------------------------ layout

    def show(self, model: ChannelModel, marker: str | None = None, left: str | None = None) -> None:
        """Switch to another channel, where the reader left it if that is still
        loaded, else at the newest message; ``marker``: the first message not
        seen yet; ``left``: the channel shown so far, whose place to keep."""
        if left is not None and self.model is not None and self.model.name == left:
            self.positions[left] = self.position()
        position = self.positions.pop(model.name, None)
        self.model = model
        self.selected = None
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
        index = min(self.history_layout.index_at(line), len(self.model) - 1)
        return self.model.entries[index].message_id, line - self.history_layout.offsets[index]

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
        self.history_layout.measure_all()
        self._laid_out(anchor)

    def placed(self, entry: MessageRow, replaced: bool) -> None:
        """``entry`` was added to the model, or ``replaced`` its earlier self
        (delivered after waiting, acknowledged; same place, maybe a new
        height): the layout changes from there on only."""
        laid_out = len(self.history_layout.heights)
        if self._check_width() or self.model is None or laid_out + (not replaced) != len(self.model):
            self.relayout()
            return
        self.history_layout.placed(self.model.index(entry.message_id), replaced)
        self._laid_out()

    def prepended(self, count: int, anchor: tuple[str, int] | None) -> None:
        """``count`` older entries were added above everything loaded."""
        laid_out = len(self.history_layout.heights)
        if self._check_width() or self.model is None or laid_out + count != len(self.model):
            self.relayout(anchor)
            return
        self.history_layout.prepended(count)
        self._laid_out(anchor)

    def older_placed(self, added: int, on_top: bool, anchor: str | None) -> None:
        """An older page went into the model: ``added`` rows, all above what
        was loaded (``on_top``) or not. ``anchor``, the row that was first
        (on line 0 of the layout then), stays where it is on screen."""
        at = (anchor, 0) if anchor is not None else None
        if on_top:  # the usual case
            self.prepended(added, at)
        else:  # another load got there first
            self.relayout(at)
        self._asked_older = False

    def mark_unseen(self, message_id: str) -> None:
        """The "new messages" rule above ``message_id``, unless it is shown already."""
        if self.marker_id is None:
            self.set_marker(message_id)

    def set_marker(self, message_id: str | None) -> None:
        """Move the "new messages" rule (None removes it)."""
        old, self.marker_id = self.marker_id, message_id
        for changed in (old, message_id):
            if changed is not None and self.model is not None and changed in self.model.by_id:
                self.placed(self.model.by_id[changed], replaced=True)

    def _check_width(self) -> bool:
        return self.history_layout.set_width(max(10, self.scrollable_content_region.width or self.size.width or 80))

    def _laid_out(self, anchor: tuple[str, int] | None = None) -> None:
        self.virtual_size = Size(self.history_layout.width, self.history_layout.lines_total)
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
        return self.history_layout.line_of(self.model.index(message_id))

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

    def scroll_to_message(self, message_id: str) -> None:
        """The message in the middle of the screen, or as near as the history
        allows: still following when that is its end (the newest message
        picked, a channel shorter than the screen), where no scroll happens
        to tell ``watch_scroll_y``."""
        line = self.line_of(message_id)
        if line is not None:
            y = min(max(0, line - self.size.height // 2), self.max_scroll_y)
            self._following = y >= self.max_scroll_y - 1
            self.scroll_to(y=y, animate=False)

    def row_at(self, y: int) -> MessageRow | None:
        """The message drawn on screen row ``y``."""
        line = self.scroll_offset.y + y
        if self.model is None or not 0 <= line < self.history_layout.lines_total:
            return None
        return self.model.entries[self.history_layout.index_at(line)]

    def on_click(self, event) -> None:
        """A click on a message tells its full date (the view shows hours only)."""
        row = self.row_at(event.y)
        if row is not None:
            self.notify(f"{row.nick}: {full_date(row.time_ms)}", title="sent")

    # --------------------------------------------------------- selection

    def select_last(self) -> bool:
        """Select the newest message (not a line of the client's own); False if there is none."""
        self.selected = None
        self.action_select(-1)
        return self.selected is not None

    def action_select(self, step: int) -> None:
        """Move the selection ``step`` messages (from the end when none is selected), passing over local lines."""
        if self.model is None or not len(self.model):
            return
        entries = self.model.entries
        index = self.model.index(self.selected) + step if self.selected in self.model.by_id else len(entries) - 1
        while 0 <= index < len(entries) and entries[index].is_local:
            index += step
        if 0 <= index < len(entries):
            self.selected = entries[index].message_id
            self.scroll_to_message(self.selected)
            self.refresh()

    @property
    def selected_row(self) -> MessageRow | None:
        return self.model.by_id.get(self.selected) if self.model is not None else None

    # --------------------------------------------------------- rendering

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.size.width
        model = self.model
        if model is not None and not len(model) and model.history_complete and model.read_from is None:
            return self._welcome_line(y, width)
        if self.model is None or line >= self.history_layout.lines_total:
            return Strip.blank(width, self.rich_style)
        layout = self.history_layout
        index = layout.index_at(line)
        strip = layout.lines(index)[line - layout.offsets[index]]
        if self.selected is not None and model.entries[index].message_id == self.selected:
            strip = strip.apply_style(SELECTED)
        return strip.apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

    def _welcome_line(self, y: int, width: int) -> Strip:
        """A channel with no history at all (the first start; not one just
        cleared) says what to do."""
        said = welcome(self.model.name, self.my_nick) if not self.model.name.startswith("@") else []
        lines = [part for line in said for part in textwrap.wrap(line, max(10, width - 1))]
        text = Text(lines[y - 1] if 0 < y <= len(lines) else "", style="bold" if y == 1 else "dim")
        return Strip(text.render(self.app.console)).apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

    @property
    def my_nick(self) -> str:
        return self.renderer.my_nick

    @my_nick.setter
    def my_nick(self, nick: str) -> None:
        self.renderer.my_nick = nick


PICK_KEYS = frozenset(binding.key for binding in ChannelView.BINDINGS)
"""The keys the history takes while a message is picked; another printable key is typed in the input."""
