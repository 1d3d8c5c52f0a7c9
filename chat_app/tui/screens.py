"""Modal screens: help, confirming a multi-line paste. What they quote - a
paste - is shown inert (``chat_app.inert_text``) and escaped from markup."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Markdown

from chat_app.commands import help_table
from chat_app.inert_text import inert
from chat_app.payload import MAX_TEXT

HELP_TEXT = """\
# sds-chat

Serverless chat: peers on this network find each other, and every peer ends
with the same messages in the same order. **Esc** (or `F1`, `q`) closes this help.

{commands}

**Keys**

| Key | |
|---|---|
| `Enter` / `Up` / `Down` | send; recall the lines sent before |
| `Ctrl+J`, `Alt+Enter` | a new line in the message (shown as ⏎); `Enter` sends them as one |
| `Tab` | complete commands, channels and nicks |
| `Alt+1`…`Alt+9` | the sidebar's first to ninth channel |
| `Ctrl+PgUp` / `Ctrl+PgDn`, `Alt+Left` / `Alt+Right` | the previous / next channel in the sidebar |
| `Ctrl+K` | switch to a channel by a few letters of its name |
| `Ctrl+N` | the next channel with unread messages |
| `PgUp` / `PgDn` | scroll the history (wherever the focus is) |
| `Ctrl+F` | search this channel (`Enter`: older match, `Esc`: back) |
| `Alt+Up` | pick a message: `Up`/`Down`, then `r` reply, `e` edit, `d` `d` delete, `+` +1, `a` react (`1`…`9`) |
| `F3` | show or hide the sidebar (hidden below 80 columns) |
| `Ctrl+T` | show or hide who is typing |
| `F4` | show or hide join, part, quit and nick lines |
| `F2`, `Ctrl+P` | next theme; the command palette |
| `F1`, `Ctrl+Q` | this help; quit |

The status bar begins with the channels that have unread messages, by
their `Alt` number: `[2:#dev 3:@bob*]` (`*`: you were mentioned). Where
two keys use one nick, each shows the start of its id (`bob~3f2a`); `✓`
marks a key you verified with `/trust`. What a command answers, and
errors, are lines in the history (`--`, `=!=`).

A click on a message shows its full date. A rule marks where each day
begins, and where the messages you have not seen begin. The line above the
history is the channel's topic; dimmed lines say who joined (`-->`), left or
quit (`<--`) and took a new nick (`--`). The member list shows each
`/away` reason; `/ignore`d people stay hidden in older history too, whatever nick they take.

**Settings** live in `settings.toml` in the data directory (edit it by hand):
`nick`, `theme`, `highlight` (words that count as a mention, as a list),
`typing`, `bell`, `notify` (a desktop notification through the terminal on
a mention), `joins` (the join and part lines), `last_channel` and
`closed` (direct conversations closed with /part).

**Your messages**: ○ not yet acknowledged, ◐ *n* possibly received by *n*
peers, ● *n* acknowledged. A message shown *waiting for earlier messages*
moves into place when the history it depends on arrives.
"""
HELP = HELP_TEXT.format(commands=help_table("tui"))


class HelpScreen(ModalScreen[None]):
    """The help, scrolled with the arrows, PageUp/PageDown, Home/End or the mouse."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; max-width: 95%; height: auto; max-height: 90%;
                                  border: thick $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape,q,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(can_focus=True):
            yield Markdown(HELP)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_dismiss(self) -> None:
        self.dismiss(None)


class ConfirmPaste(ModalScreen[str | None]):
    """Asks how to send what was pasted: as separate messages ("lines"), as
    one multi-line message ("one", when it fits in one) or not at all (None).
    Enter sends it the way the question names first - as one message where it
    may go so, else as several - never drops it; Esc is the only way to."""

    DEFAULT_CSS = """
    ConfirmPaste { align: center middle; }
    ConfirmPaste > Vertical { width: 60; max-width: 100%; height: auto; border: thick $warning;
                              background: $surface; padding: 1 2; }
    ConfirmPaste Label { width: 100%; }  /* the question wraps, to its last word */
    ConfirmPaste Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmPaste Button { margin-left: 1; }
    ConfirmPaste.-narrow Horizontal { layout: vertical; }
    ConfirmPaste.-narrow Button { width: 100%; margin-left: 0; }
    """
    NARROW = 60  # columns below which the buttons go one under the other, compact
    # Priority bindings, as the reaction picker's: the answer closes the prompt
    # while the app reads its key, so the keys read after it in one burst go to
    # the input, not to a button about to close.
    BINDINGS = [Binding("escape", "cancel", "Cancel", priority=True),
                Binding("enter", "enter", "Send", priority=True),
                Binding("y", "send('lines')", "Send", priority=True),
                Binding("o", "send('one')", "One message", priority=True)]

    def __init__(self, lines: list[str], whole: str | None = None, one: str | None = None) -> None:
        """``lines``: the messages to send; ``whole``: the one line they were cut
        from, if so; ``one``: the paste as one message, if it may be sent so."""
        super().__init__()
        self.lines, self.whole, self.one = lines, whole, one
        self.default = "lines" if one is None else "one"  # what Enter does

    def compose(self) -> ComposeResult:
        preview = "\n".join(inert(line[:56]) for line in self.lines[:5])
        more = f"\n… and {len(self.lines) - 5} more" if len(self.lines) > 5 else ""
        what = f"{len(self.lines)} lines" if self.whole is None else \
            f"one line of {len(self.whole):,} characters (at most {MAX_TEXT:,} a message)"
        several = f"{len(self.lines)} messages"
        with Vertical():
            yield Label(f"Send {what} as {several} (Enter or y)?" if self.one is None else
                        f"Send {what} as one message (Enter or o), or as {several} (y)?")
            yield Label(escape(preview + more), classes="preview")
            with Horizontal():
                yield Button("Cancel (Esc)", id="cancel")
                if self.one is not None:
                    yield Button("One message", id="one", variant="primary")
                yield Button(several, id="lines", variant="warning")

    def on_mount(self) -> None:
        self.set_focus(self.query_one(f"#{self.default}", Button))  # the button Enter presses, marked

    def on_resize(self, event) -> None:
        narrow = event.size.width < self.NARROW
        self.set_class(narrow, "-narrow")
        for button in self.query(Button):
            button.compact = narrow

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_send(event.button.id)

    def action_enter(self) -> None:
        """Enter presses the button that has the focus (Tab moves it): at first, the default."""
        focused = self.focused
        self.action_send(focused.id if isinstance(focused, Button) else self.default)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_send(self, how: str) -> None:
        self.dismiss(None if how == "cancel" or (how == "one" and self.one is None) else how)
