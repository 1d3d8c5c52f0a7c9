"""The message line: Enter sends, Alt+Enter (ESC CR from most terminals,
read as Alt+Enter by ``app.read_alt_keys``), Shift+Enter (where the terminal
tells it from Enter) or Ctrl+J (a line feed, on every terminal) starts a
new line of the same message - shown in the field as ⏎ - Tab completes commands, channels and
nicks, Up and Down recall what was sent before, and a paste of several
lines asks before it sends anything. So does a line longer than a message
may be (pasted, or in the field at Enter): it is offered as several
messages, and the field keeps it until the user says yes. A paste holding a
control character (text copied from a terminal, with its colours) is
refused with the reason: the wire would refuse it, and in the field it would
reach the terminal."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.binding import Binding
from rich.text import Text
from textual.message import Message

from chat_app.commands import commands_for, complete
from chat_app.payload import MAX_TEXT
from chat_app.wire_rule import text_problem
from chat_app.tui.widgets.field import Field

COMMANDS = tuple(c.slash for c in commands_for("tui"))
HISTORY = 200  # lines remembered for Up/Down
NEW_LINE = "⏎"  # how a new line in the message being written is shown in the field


def pieces(line: str, limit: int = MAX_TEXT) -> list[str]:
    """``line`` as messages of at most ``limit`` characters, cut after a
    space where one is in the second half of a piece, else where it must."""
    out = []
    while len(line) > limit:
        cut = line.rfind(" ", limit // 2, limit) + 1 or limit
        out.append(line[:cut].rstrip())
        line = line[cut:]
    return [*out, line] if line.strip() else out


def too_long(line: str) -> bool:
    """A message (not a command) longer than one message may be."""
    return (not line.startswith("/") or line.startswith("//")) and len(line) > MAX_TEXT


class ChatInput(Field):
    DEFAULT_CSS = """
    ChatInput {
        dock: bottom;
        border: tall $accent 40%;
    }
    ChatInput:focus { border: tall $accent; }
    """
    BINDINGS = [
        # Not a priority binding: one would run before the field has taken the keys read with the Tab.
        Binding("tab", "complete", "Complete", show=False),
        Binding("up", "recall(-1)", "Previous line", show=False),
        Binding("down", "recall(1)", "Next line", show=False),
        Binding("alt+enter", "newline", "New line", show=False),
        Binding("shift+enter", "newline", "New line", show=False),
        Binding("ctrl+j", "newline", "New line", show=False),
    ]

    class Line(Message):
        """A line to send or run (Enter)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Refused(Message):
        """A paste was not taken: the one-line reason, for the buffer."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    class PastedLines(Message):
        """Several messages to send if the user says so: ``lines`` pasted, or
        (``whole``, the line as pasted or typed) one line cut into pieces;
        ``in_field``: the line is in the field, to clear once sent; ``one``:
        the paste as one multi-line message, when it fits in one."""

        def __init__(self, lines: list[str], whole: str | None = None, in_field: bool = False,
                     one: str | None = None) -> None:
            super().__init__()
            self.lines, self.whole, self.in_field, self.one = lines, whole, in_field, one

    def __init__(self, candidates: Callable[[], tuple[list[str], list[str]]], **kwargs) -> None:
        # Not select_on_focus (Input's default): the focus comes back here holding
        # "/reply <id> " or a draft, and with all of it selected the next key typed would replace it.
        super().__init__(placeholder="Message, or /help", select_on_focus=False, **kwargs)
        self._candidates = candidates  # () -> (channels, nicks)
        self._cycle: tuple[str, list[str], int] | None = None
        self.history: list[str] = []  # lines sent, oldest first
        self._recalled: int | None = None  # index into history while going through it
        self._draft = ""  # what was typed before going up

    async def action_submit(self) -> None:
        """Enter: take the line and clear the field at once, then send it on;
        one too long for a message stays until the user says how to send it."""
        line = self.value.strip()
        if too_long(line):
            self.post_message(self.PastedLines(pieces(line), whole=line, in_field=True))
            return
        self.value = ""
        self._recalled, self._draft = None, ""
        if line:
            if not self.history or self.history[-1] != line:
                self.history = [*self.history[-(HISTORY - 1):], line]
            self.post_message(self.Line(line))

    def action_newline(self) -> None:
        """A new line in the message being written (Enter sends them all, as one message)."""
        self.insert_text_at_cursor("\n")

    @property
    def _value(self) -> Text:
        """The field drawn on its one line: each new line as ⏎, one character
        for one, so the cursor stays where the value has it."""
        return Text(self.value.replace("\n", NEW_LINE), no_wrap=True, overflow="ignore", end="")

    def action_recall(self, step: int) -> None:
        if not self.history:
            return
        if self._recalled is None:
            if step > 0:
                return
            self._draft, index = self.value, len(self.history) - 1
        else:
            index = self._recalled + step
        if index < 0:
            index = 0
        if index >= len(self.history):
            self._recalled, self.value = None, self._draft
        else:
            self._recalled, self.value = index, self.history[index]
        self.cursor_position = len(self.value)

    def action_complete(self) -> None:
        if self._cycle and self.value == self._cycle[1][self._cycle[2]]:
            base, options, index = self._cycle
            index = (index + 1) % len(options)
        else:
            channels, nicks = self._candidates()
            base, options, index = self.value, complete(self.value, COMMANDS, channels, nicks), 0
            if not options:
                self.app.bell()
                return
        self._cycle = (base, options, index)
        self.value = options[index]
        self.cursor_position = len(self.value)

    def _on_paste(self, event: events.Paste) -> None:
        answer = self.paste_answer(event.text)
        if answer is None:  # one line: Input's own handler (Textual calls it after this one) puts it in the field
            return
        self.post_message(answer)
        event.stop()
        event.prevent_default()

    @classmethod
    def paste_answer(cls, text: str) -> Refused | PastedLines | None:
        """What a paste of ``text`` asks of the screen: to say why it was
        refused, or to ask how to send it; None: one line, for the field."""
        lines = [line for line in text.splitlines() if line.strip()]
        problem = next(filter(None, map(text_problem, lines)), None)
        if problem is not None:
            return cls.Refused(f"not pasted: {problem}")
        if len(lines) > 1:
            one = "\n".join(text.splitlines()).strip("\n")  # exact, but for the line ends
            return cls.PastedLines([piece for line in lines for piece in pieces(line)],
                                   one=one if len(one) <= MAX_TEXT else None)
        if lines and too_long(lines[0]):
            return cls.PastedLines(pieces(lines[0]), whole=lines[0])
        return None
