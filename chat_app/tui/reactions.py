"""The quick-reaction picker: ``a`` on a picked message opens a small row of
common reactions above the input. A digit, or Left/Right then Enter (or a
click), answers with that reaction, which the chat screen sends at once -
the same ``React`` as ``+`` - so one given already is taken back, as
``/react`` does; ``/`` answers that the user would rather type the reaction;
Esc answers nothing. A modal screen, so that while it is open these keys, and
Esc, mean nothing else; it leaves the history visible, the picked message
still marked."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

QUICK = ("👍", "❤️", "😂", "🎉", "😮", "😢", "👀", "✅", "+1")
TYPE_ONE = "/"  # the picker's answer when the user would rather type the reaction
CELL = 6  # columns a choice takes: " 1 👍 "
FRAME = 4  # columns of the box's border and padding


def drawn(emoji: str) -> str:
    """``emoji`` as the picker draws it: without the selector asking for emoji
    presentation (U+FE0F), which terminals disagree on - tmux gives "❤️" one
    column, Textual two - and a line measured wrong pulls everything right of
    it out of place. The reaction sent keeps it, as typed ones have it."""
    return emoji.replace("\ufe0f", "")


class ReactionPicker(ModalScreen[str | None]):
    DEFAULT_CSS = f"""
    ReactionPicker {{ align: center bottom; background: $background 0%; }}
    ReactionPicker > Vertical {{ width: auto; height: auto; margin-bottom: 5; padding: 0 1;
                                 border: round $accent; border-title-color: $accent; background: $surface; }}
    ReactionPicker Grid {{ grid-size: {len(QUICK)}; grid-columns: {CELL}; grid-rows: 1; height: auto; width: auto; }}
    ReactionPicker Grid > Label {{ width: {CELL}; }}
    ReactionPicker Grid > Label.-chosen {{ background: $accent; color: $text; text-style: bold; }}
    ReactionPicker .hint {{ color: $text-muted; width: 100%; }}
    """
    # Priority bindings, as the history's (``ChannelView``): the answer closes the
    # picker while the app reads its key, so the keys read after it in one burst
    # go to the input, not to a picker about to close.
    BINDINGS = [
        Binding("escape", "dismiss(None)", "Back", priority=True),
        Binding("slash", f"dismiss({TYPE_ONE!r})", "Type one", priority=True),
        Binding("left", "move(-1)", show=False, priority=True),
        Binding("right", "move(1)", show=False, priority=True),
        Binding("enter", "choose", show=False, priority=True),
        *(Binding(str(n), f"choose({n - 1})", show=False, priority=True) for n in range(1, len(QUICK) + 1)),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.chosen = 0
        self.choices = [Label(f" {n} {drawn(emoji)}") for n, emoji in enumerate(QUICK, 1)]

    def compose(self) -> ComposeResult:
        with Vertical() as self.box:
            self.box.border_title = "React"
            with Grid():
                yield from self.choices
            yield Label(f"1-{len(QUICK)} or ←→ Enter: react  {TYPE_ONE}: type one  Esc: back", classes="hint")

    def on_mount(self) -> None:
        self.choices[self.chosen].add_class("-chosen")
        self.fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.width)

    def fit(self, width: int) -> None:
        """As many choices a row as ``width`` columns hold: one row from 58, more below."""
        columns = max(1, min(len(QUICK), (width - FRAME) // CELL))
        self.query_one(Grid).styles.grid_size_columns = columns
        self.box.styles.width = columns * CELL + FRAME

    def action_move(self, step: int) -> None:
        self.choices[self.chosen].remove_class("-chosen")
        self.chosen = (self.chosen + step) % len(QUICK)
        self.choices[self.chosen].add_class("-chosen")

    def action_choose(self, index: int | None = None) -> None:
        self.dismiss(QUICK[self.chosen if index is None else index])

    def on_click(self, event: events.Click) -> None:
        if event.widget in self.choices:
            self.action_choose(self.choices.index(event.widget))
