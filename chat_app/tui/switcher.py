"""The quick switcher (Ctrl+K): type a few letters of a channel's name, in
order but not necessarily together ("gnl" finds #general), Enter goes there.
Channels with unread messages come first among equals. Names are drawn
inert and as plain text, never markup."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.fuzzy import Matcher
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from chat_app.inert_text import inert
from chat_app.tui.widgets.field import Field


def ranked(query: str, channels: list[tuple[str, int]]) -> list[str]:
    """Channel names matching ``query`` fuzzily, best first (the exact name
    before all); ``channels``: (name, unread) in sidebar order, which breaks ties."""
    if not query.strip("#"):
        return [name for name, _ in channels]
    query = query.lstrip("#")
    matcher = Matcher(query)
    scored = [(name == query, matcher.match(name), bool(unread), -i, name) for i, (name, unread) in enumerate(channels)]
    return [name for _, score, _, _, name in sorted(scored, reverse=True) if score > 0]


class Query(Field):
    """The switcher's field: Enter answers at once, in order with the letters
    typed before it, so the keys read after it in one burst are the input's."""

    def action_submit(self) -> None:
        self.screen.choose(self.value)


class QuickSwitcher(ModalScreen[str | None]):
    DEFAULT_CSS = """
    QuickSwitcher { align: center top; }
    QuickSwitcher > Vertical { width: 50; max-width: 95%; height: auto; margin-top: 2;
                               border: thick $accent; background: $surface; }
    QuickSwitcher OptionList { height: auto; max-height: 12; border: none; }
    """
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
    ]

    def __init__(self, channels: list[tuple[str, int]]) -> None:
        super().__init__()
        self.channels = channels
        self.shown_for: str | None = None  # the query the options were listed for

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Query(placeholder="Switch to channel…")
            yield OptionList()

    def on_mount(self) -> None:
        self._show("")

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        if event.value != self.shown_for:
            self._show(event.value)

    def _show(self, query: str) -> None:
        self.shown_for = query
        options = self.query_one(OptionList)
        options.clear_options()
        unread = dict(self.channels)
        labels = {name: Text.assemble(f"#{inert(name)}", (f"  {unread[name]}", "bold") if unread[name] else "")
                  for name in ranked(query, self.channels)}
        options.add_options(Option(label, id=name) for name, label in labels.items())
        if options.option_count:
            options.highlighted = 0

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            options.highlighted = ((options.highlighted or 0) + step) % options.option_count

    def choose(self, query: str) -> None:
        """Enter, as the field reads it: the best match for what it holds
        (its Changed messages are still queued behind the keys)."""
        if query != self.shown_for:
            self._show(query)
        options = self.query_one(OptionList)
        if options.highlighted is None:
            self.app.bell()
            return
        self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
