"""The chat screen: it holds the widgets (sidebar, topic line, channel view,
search bar, typing line, input, status bar) and hands the work to its parts:
node events (``node_events``), channel switching (``navigation``), history
pages (``history``), join/part lines (``presence``), typed lines
(``command_line``). Layout styles are in ``assets/chat.tcss``."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from chat_app import events as ev
from chat_app.commands import Typing
from chat_app.tui.command_line import confirm_paste, run_line
from chat_app.tui.direct import DirectPart, is_direct
from chat_app.tui.history import Pager
from chat_app.tui.node_events import NodeEvents, now_ms
from chat_app.tui.model import ChannelModel
from chat_app.tui.navigation import Navigator
from chat_app.tui.palette import ChatCommands
from chat_app.tui.presence import PresenceLines
from chat_app.tui.read_markers import ReadMarkers
from chat_app.tui.roster import Roster
from chat_app.tui.search import SearchBar
from chat_app.tui.settings import Settings
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.chat_input import ChatInput
from chat_app.tui.widgets.member_list import MemberList
from chat_app.tui.widgets.status_bar import StatusBar
from chat_app.tui.widgets.topic_line import TopicLine
from chat_app.tui.widgets.typing_line import TypingLine


WIDE = 80  # columns from which the sidebar is shown


class ChatScreen(Screen):
    COMMANDS = {ChatCommands}
    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("ctrl+n", "next_unread", "Next unread"),
        Binding("ctrl+t", "toggle_typing", "Typing on/off", show=False),
        Binding("f4", "toggle_joins", "Joins on/off", show=False),
        Binding("f3", "toggle_sidebar", "Sidebar", show=False),
        Binding("ctrl+k", "switcher", "Switch", priority=True),  # over the input's "delete to the end"
        Binding("ctrl+pageup", "cycle(-1)", "Previous channel", show=False),
        Binding("ctrl+pagedown", "cycle(1)", "Next channel", show=False),
        *(Binding(f"alt+{n}", f"channel_number({n})", f"Channel {n}", show=False, priority=True) for n in range(1, 10)),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    def __init__(self, data_dir: Path, settings: Settings, *, show_typing: bool = True,
                 highlight: list[str] | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.settings = settings
        self.show_typing = show_typing
        self.models: dict[str, ChannelModel] = {}
        self.private: set[str] = set()  # channels marked private in the sidebar
        self.svs: set[str] = set()  # channels marked as running on State Vector Sync
        self.roster = Roster()
        self.current: str | None = None
        self.nick = ""
        self.peer_id = ""
        self.catching_up: dict[ev.Address, list[str]] = {}
        self._wide: bool | None = None  # was the screen WIDE at the last resize?
        self.read_markers = ReadMarkers(data_dir)
        self.events = NodeEvents(self)
        self.navigator = Navigator(self)
        self.pager = Pager(self)
        self.presence = PresenceLines(self)
        # Held, not queried: node events keep arriving while a modal screen is open.
        self.view = ChannelView(id="history")
        self.highlight_words = highlight if highlight is not None else settings.highlight
        self.view.renderer.highlight_words = self.highlight_words
        self.search = SearchBar(data_dir, self.view, id="search")
        self.channel_list = ChannelList(id="channels")
        self.direct = DirectPart(self)
        self.member_list = MemberList(id="members")
        self.typing_line = TypingLine(id="typing")
        self.topic_line = TopicLine(id="topic")
        self.input = ChatInput(lambda: (list(self.models), self.roster.nicks()), id="input")
        self.status_bar = StatusBar(id="status")

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar") as self.sidebar:
                yield self.channel_list
                yield self.direct.list
                yield self.member_list
            with Vertical(id="main"):
                yield self.topic_line
                yield self.view
                yield self.search
                yield self.typing_line
                yield self.input
        yield self.status_bar
        yield Footer()

    def on_mount(self) -> None:
        self.input.focus()
        self.set_interval(2.0, self.refresh_status)

    @property
    def node(self):
        bridge = self.app.bridge
        return bridge.node if bridge is not None else None

    def node_event(self, event: ev.AppEvent) -> None:
        if not self.direct.handle(event):
            self.events.handle(event)

    def show_message(self, event: ev.MessageDelivered | ev.MessageWaiting) -> None:
        self.events.show_message(event)

    def add_channel(self, channel: str) -> None:
        if channel not in self.models:
            self.models[channel] = ChannelModel(channel)
            self.pager.load(channel)
        self.refresh_channels()

    # ------------------------------------------------- history and channels

    @on(ChannelView.NeedOlder)
    def older(self, event: ChannelView.NeedOlder) -> None:
        self.pager.older(event.channel)

    def on_unmount(self) -> None:
        self.navigator.leave_current()
        self.read_markers.save()

    def switch_to(self, channel: str) -> None:
        self.navigator.switch_to(channel)

    def refresh_channels(self) -> None:
        self.navigator.refresh_channels()

    @on(ChannelList.Selected)
    def channel_selected(self, event: ChannelList.Selected) -> None:
        if event.channel != self.current:
            self.switch_to(event.channel)
        self.input.focus()

    @on(ChannelView.ReachedEnd)
    def all_seen(self, event: ChannelView.ReachedEnd) -> None:
        self.navigator.all_seen(event.channel)

    def action_cycle(self, step: int) -> None:
        self.navigator.cycle(step)

    def action_channel_number(self, number: int) -> None:
        self.navigator.number(number)

    def action_switcher(self) -> None:
        self.navigator.open_switcher()

    def action_next_unread(self) -> None:
        self.navigator.next_unread()

    def action_page(self, direction: int) -> None:
        """PageUp/PageDown scroll the history wherever the focus is."""
        (self.view.scroll_page_up if direction < 0 else self.view.scroll_page_down)(animate=False)

    # ------------------------------------------------------------- layout

    def on_resize(self, event) -> None:
        """Below WIDE columns the sidebar folds away (F3 brings it back);
        from WIDE up it is shown again, unless hidden since."""
        wide = event.size.width >= WIDE
        if wide != self._wide:
            self._wide = wide
            self.sidebar.display = wide

    def action_toggle_sidebar(self) -> None:
        self.sidebar.display = not self.sidebar.display

    # ------------------------------------------------- members and status

    def refresh_members(self) -> None:
        members = self.direct.members(self.current) if is_direct(self.current) else self.roster.in_channel(self.current)
        self.member_list.show(self.nick or "you", members, my_away=self.roster.my_away)

    def refresh_status(self) -> None:
        waiting = sum(len(m.waiting) for m in self.models.values())
        received = sum(len(m) for m in self.models.values())
        self.status_bar.show(self.roster.present_count(), waiting, received, str(self.data_dir),
                             len(self.catching_up))
        self.refresh_members()

    def refresh_typing(self) -> None:
        model = self.models.get(self.current) if self.current else None
        nicks = model.typing_now(now_ms()) if model is not None and self.show_typing else []
        self.typing_line.show(nicks)

    def action_toggle_joins(self) -> None:
        self.presence.toggle()

    def action_toggle_typing(self) -> None:
        self.show_typing = self.settings.typing = not self.show_typing
        self.app.save_settings()
        self.refresh_typing()
        self.notify(f"typing indicators {'shown' if self.show_typing else 'hidden'}")

    # -------------------------------------------------------------- search

    def action_search(self) -> None:
        self.search.open()

    def on_key(self, event) -> None:
        if event.key == "escape" and self.search.display:  # wherever the focus is
            event.stop()
            self.search.action_close()

    @on(SearchBar.Closed)
    def search_closed(self) -> None:
        self.input.focus()

    # --------------------------------------------------------------- input

    @on(Input.Changed, "#input")
    def typed(self, event: Input.Changed) -> None:
        if event.value and not event.value.startswith("/") and self.current and self.node is not None:
            self.app.bridge.execute(Typing(), self.current)

    @on(ChatInput.Line)
    def submitted(self, event: ChatInput.Line) -> None:
        run_line(self, event.text)

    @on(ChatInput.PastedLines)
    def pasted(self, event: ChatInput.PastedLines) -> None:
        confirm_paste(self, event.lines)

    def run_line(self, line: str) -> None:
        run_line(self, line)
