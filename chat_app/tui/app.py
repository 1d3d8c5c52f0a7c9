"""The sds-chat terminal client: start-up, themes and the keys that work
everywhere. What the client shows is the chat screen's (``chat_screen.py``).

The node runs on its own thread (``NodeThread``); its typed events arrive
here as ``NodeEvent`` messages and go to the chat screen, which keeps
handling them while a modal screen is open.

Notices (toasts) and desktop notifications quote what peers sent - nicks,
topics, away reasons, message text - so every one is made inert here
(``chat_app.inert_text``), and never read as markup.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from textual import events, on, work
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel

from chat_app import events as ev
from chat_app.inert_text import inert
from chat_app.node import Emit, Node
from chat_app.tui.bridge import NodeThread
from chat_app.tui.chat_screen import ChatScreen
from chat_app.tui.screens import HelpScreen
from chat_app.tui.settings import Settings, SettingsError
from chat_app.tui.widgets.channel_view import PICK_KEYS

ASSETS = Path(__file__).resolve().parents[2] / "assets"
THEMES = ("textual-dark", "nord", "gruvbox", "textual-light")


def read_alt_keys() -> None:
    """Alt+1..9 switch channels and Alt+Enter starts a new line. xterm, tmux,
    GNOME Terminal and most others send ESC then the key, which Textual misreads
    where no binding can catch it: ESC and a digit as the character Option+digit
    types on a Mac under WezTerm ("™" for Alt+2), and ESC and CR as Enter (it
    keeps Alt only for a key of one character), which would send the message.
    The pair is read as Alt+Enter as soon as the CR arrives; Escape alone still
    reads as Escape once the terminal has sent nothing after it."""
    for digit in "123456789":
        ANSI_SEQUENCES_KEYS.pop(f"\x1b{digit}", None)
    ANSI_SEQUENCES_KEYS["\x1b\r"] = (SimpleNamespace(value="alt+enter"),)  # Textual takes a key's name from .value


def notification(title: str, body: str, environ=os.environ) -> str:
    """The escape sequence that asks the terminal for a desktop notification.
    What goes inside is inert: a control character would end the sequence
    early and start another; and without semicolons, which separate the
    fields of OSC 777."""
    title, body = (inert(s).replace(";", " ")[:200] for s in (title, body))
    if "VTE_VERSION" in environ or "rxvt" in environ.get("TERM", ""):
        return f"\x1b]777;notify;{title};{body}\x1b\\"
    return f"\x1b]9;{title}: {body}\x1b\\"


class NodeEvent(Message):
    def __init__(self, event: ev.AppEvent) -> None:
        super().__init__()
        self.event = event


class ChatApp(App):
    CSS_PATH = ASSETS / "chat.tcss"
    TITLE = "sds-chat"
    BINDINGS = [
        Binding("f2", "next_theme", "Theme"),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, make_node: Callable[[Emit], Node], data_dir: Path, *, bell: bool = True,
                 show_typing: bool = True, highlight: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__()
        read_alt_keys()
        self.make_node = make_node
        self.data_dir = data_dir
        self.bridge: NodeThread | None = None
        self.settings_problem: str | None = None
        try:
            self.settings = Settings.load(data_dir)
        except SettingsError as exc:  # said once on screen; the file is left as the user wrote it
            self.settings, self.settings_problem = Settings(), str(exc)
        self.bell_on_mention = bell and self.settings.bell
        self.chat = ChatScreen(data_dir, self.settings, show_typing=show_typing and self.settings.typing,
                               highlight=[*self.settings.highlight, *highlight])

    def get_default_screen(self) -> ChatScreen:
        return self.chat

    def on_mount(self) -> None:
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        if self.settings_problem:
            self.notify(f"{self.settings_problem} (using the defaults)", severity="warning", timeout=15)
        self.start_node()

    def save_settings(self) -> None:
        """Keep what changed from the keyboard; never over a file we could not read."""
        if self.settings_problem is None:
            try:
                self.settings.save(self.data_dir)
            except OSError as exc:
                self.settings_problem = f"cannot save the settings: {exc.strerror}"
                self.notify(self.settings_problem, severity="warning")

    def watch_theme(self, theme: str) -> None:
        if self.is_mounted and theme != self.settings.theme:
            self.settings.theme = theme
            self.save_settings()

    @work(thread=True, exclusive=True, group="node")
    def start_node(self) -> None:
        self.bridge = NodeThread(self.make_node, lambda event: self.post_message(NodeEvent(event)))
        try:
            self.bridge.start()
        except Exception as exc:  # e.g. the port is taken
            self.call_from_thread(self.notify, f"could not start: {exc}", severity="error", timeout=30)

    async def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.stop()

    async def on_event(self, event: events.Event) -> None:
        """A paste into the message line is answered as the app reads it, as a
        key binding is: the prompt it opens is there for the keys read after
        it in the same burst (Textual would hand the paste to the field's own
        queue, and those keys would be typed behind the prompt). So is a key
        typed in the history that picks nothing: it goes to the input."""
        if isinstance(event, events.Paste) and not event.is_forwarded and self.focused is self.chat.input:
            answer = self.chat.input.paste_answer(event.text)
            if answer is not None:
                self.chat.paste_answered(answer)
                return
        if (isinstance(event, events.Key) and not event.is_forwarded and self.focused is self.chat.view
                and event.is_printable and event.key not in PICK_KEYS):
            # Typing while a message is picked writes a message: the key, and those read after
            # it, go to the input - not, by chance, to the picking keys (the a and Enter of
            # "/edit 2 a line" sent a reaction to the picked message).
            self.chat.view_left()
        await super().on_event(event)

    @on(NodeEvent)
    def node_event(self, message: NodeEvent) -> None:
        self.chat.node_event(message.event)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """A toast, as plain text made inert, whatever ``markup`` asks: it may quote a peer."""
        super().notify(inert(message, lines=True), title=inert(title), severity=severity, timeout=timeout,
                       markup=False)

    def mentioned(self, channel: str, nick: str, text: str) -> None:
        """Someone mentioned me or a highlight word: the bell, and a desktop
        notification through the terminal (OSC 777 where the terminal is
        known to take it, else OSC 9), each if the settings allow."""
        if self.bell_on_mention:
            self.bell()
        if self.settings.notify and self._driver is not None:
            self._driver.write(notification(f"#{channel}", f"{nick}: {text}"))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_next_theme(self) -> None:
        index = THEMES.index(self.theme) + 1 if self.theme in THEMES else 0
        self.theme = THEMES[index % len(THEMES)]
