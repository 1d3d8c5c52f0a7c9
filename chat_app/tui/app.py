"""The sds-chat terminal client: start-up, themes and the keys that work
everywhere. What the client shows is the chat screen's (``chat_screen.py``).

The node runs on its own thread (``NodeThread``); its typed events arrive
here as ``NodeEvent`` messages and go to the chat screen, which keeps
handling them while a modal screen is open.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.message import Message

from chat_app import events as ev
from chat_app.node import Emit, Node
from chat_app.tui.bridge import NodeThread
from chat_app.tui.chat_screen import ChatScreen
from chat_app.tui.screens import HelpScreen

ASSETS = Path(__file__).resolve().parents[2] / "assets"
THEMES = ("textual-dark", "nord", "gruvbox", "textual-light")


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
                 show_typing: bool = True) -> None:
        super().__init__()
        self.make_node = make_node
        self.data_dir = data_dir
        self.bell_on_mention = bell
        self.bridge: NodeThread | None = None
        self.chat = ChatScreen(data_dir, show_typing=show_typing)

    def get_default_screen(self) -> ChatScreen:
        return self.chat

    def on_mount(self) -> None:
        self.start_node()

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

    @on(NodeEvent)
    def node_event(self, message: NodeEvent) -> None:
        self.chat.node_event(message.event)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_next_theme(self) -> None:
        index = THEMES.index(self.theme) + 1 if self.theme in THEMES else 0
        self.theme = THEMES[index % len(THEMES)]
