"""The chat screen: it coordinates the widgets (sidebar, channel view, search
bar, typing line, input, status bar) and turns the node's events into what
they show. Layout styles are in ``assets/chat.tcss``."""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from chat_app import events as ev
from chat_app.tui.command_line import run_line
from chat_app.tui.history import place_page, read_page
from chat_app.tui.node_events import NodeEvents, now_ms
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.palette import ChatCommands
from chat_app.tui.read_markers import ReadMarkers
from chat_app.tui.roster import Roster
from chat_app.tui.screens import ConfirmPaste
from chat_app.tui.search import SearchBar
from chat_app.tui.settings import Settings
from chat_app.tui.switcher import QuickSwitcher
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.chat_input import ChatInput
from chat_app.tui.widgets.member_list import MemberList
from chat_app.tui.widgets.status_bar import StatusBar
from chat_app.tui.widgets.typing_line import TypingLine


WIDE = 80  # columns from which the sidebar is shown


class ChatScreen(Screen):
    COMMANDS = {ChatCommands}
    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("ctrl+n", "next_unread", "Next unread"),
        Binding("ctrl+t", "toggle_typing", "Typing on/off", show=False),
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
        self.positions: dict[str, tuple[str, int] | None] = {}  # where the reader left each channel
        self.read_markers = ReadMarkers(data_dir)
        self.events = NodeEvents(self)
        # Held, not queried: node events keep arriving while a modal screen is open.
        self.view = ChannelView(id="history")
        self.highlight_words = highlight if highlight is not None else settings.highlight
        self.view.renderer.highlight_words = self.highlight_words
        self.search = SearchBar(data_dir, self.view, id="search")
        self.channel_list = ChannelList(id="channels")
        self.member_list = MemberList(id="members")
        self.typing_line = TypingLine(id="typing")
        self.input = ChatInput(lambda: (list(self.models), self.roster.nicks()), id="input")
        self.status_bar = StatusBar(id="status")

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar") as self.sidebar:
                yield self.channel_list
                yield self.member_list
            with Vertical(id="main"):
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

    def call_node(self, name: str, *args):
        """Run the node's method ``name`` on its own thread (a future)."""
        return self.app.bridge.call(getattr(self.node, name), *args)

    def node_event(self, event: ev.AppEvent) -> None:
        self.events.handle(event)

    def show_message(self, event: ev.MessageDelivered | ev.MessageWaiting) -> None:
        self.events.show_message(event)

    def add_channel(self, channel: str) -> None:
        if channel not in self.models:
            self.models[channel] = ChannelModel(channel)
            self.load_history(channel)
        self.refresh_channels()

    # ------------------------------------------------------------ history

    @work(thread=True, group="history")
    def load_history(self, channel: str, before: tuple[int, str] | None = None) -> None:
        rows, complete = read_page(self.data_dir, channel, before)
        self.app.call_from_thread(self.history_loaded, channel, rows, before, complete)

    def history_loaded(self, channel: str, rows: list[MessageRow], before: tuple[int, str] | None,
                       complete: bool) -> None:
        if (model := self.models.get(channel)) is None:
            return
        place_page(model, self.view, rows, before, complete, visible=channel == self.current)
        seen = self.read_markers.get(channel)
        if before is None and seen is not None:  # the first page: what came since the reader was last here
            unseen = [row for row in rows if row.key > seen and not row.own]
            if channel != self.current:
                model.unread += len(unseen)
                self.refresh_channels()
            elif unseen and self.view.marker_id is None:
                self.view.set_marker(unseen[0].message_id)

    def on_unmount(self) -> None:
        self.leave_current()
        self.read_markers.save()

    @on(ChannelView.NeedOlder)
    def older(self, event: ChannelView.NeedOlder) -> None:
        model = self.models.get(event.channel)
        if model is not None and model.oldest() is not None:
            self.load_history(event.channel, model.oldest().key)

    # ----------------------------------------------------------- channels

    def switch_to(self, channel: str) -> None:
        """Show ``channel`` where the reader left it, with a rule above the
        first message they have not seen."""
        self.leave_current()
        model = self.models[channel]
        self.current = channel
        unread = min(model.unread, len(model))
        marker = model.entries[-unread].message_id if unread else None
        model.unread = model.mentions = 0
        self.view.show(model, self.positions.pop(channel, None), marker)
        self.refresh_channels()
        self.refresh_members()
        self.refresh_typing()
        self.app.title = f"sds-chat · #{channel}"
        if self.settings.last_channel != channel:
            self.settings.last_channel = channel
            self.app.save_settings()

    def leave_current(self) -> None:
        """Remember where the reader is in the channel on screen."""
        model = self.models.get(self.current) if self.current else None
        if model is not None:
            self.positions[model.name] = self.view.position()
            if self.view.following and len(model):
                self.read_markers.saw(model.name, model.entries[-1].key)

    def refresh_channels(self) -> None:
        rows = [(name, m.unread, m.mentions) for name, m in self.models.items()]
        self.channel_list.update_channels(rows, self.current, self.private, self.svs)

    @on(ChannelList.Selected)
    def channel_selected(self, event: ChannelList.Selected) -> None:
        if event.channel != self.current:
            self.switch_to(event.channel)
        self.input.focus()

    def action_cycle(self, step: int) -> None:
        """The previous or next channel in the sidebar, round the end."""
        names = list(self.models)
        if names and self.current in names:
            self.switch_to(names[(names.index(self.current) + step) % len(names)])

    def action_channel_number(self, number: int) -> None:
        """Alt+1..9: the sidebar's first to ninth channel."""
        names = list(self.models)
        if number <= len(names):
            self.switch_to(names[number - 1])
        else:
            self.app.bell()

    def action_switcher(self) -> None:
        def chosen(channel: str | None) -> None:
            if channel in self.models:
                self.switch_to(channel)
            self.input.focus()

        self.app.push_screen(QuickSwitcher([(name, m.unread) for name, m in self.models.items()]), chosen)

    def action_next_unread(self) -> None:
        names = list(self.models)
        start = names.index(self.current) + 1 if self.current in names else 0
        for name in names[start:] + names[:start]:
            if self.models[name].unread:
                self.switch_to(name)
                return
        self.notify("no unread messages")

    @on(ChannelView.ReachedEnd)
    def all_seen(self, event: ChannelView.ReachedEnd) -> None:
        model = self.models.get(event.channel)
        if model is not None and event.channel == self.current and (model.unread or model.mentions):
            model.unread = model.mentions = 0
            self.refresh_channels()

    def action_page(self, direction: int) -> None:
        """PageUp/PageDown scroll the history wherever the focus is."""
        if direction < 0:
            self.view.scroll_page_up(animate=False)
        else:
            self.view.scroll_page_down(animate=False)

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
        self.member_list.show(self.nick or "you", self.roster.in_channel(self.current))

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
            self.call_node("typing", self.current)

    @on(ChatInput.Line)
    def submitted(self, event: ChatInput.Line) -> None:
        self.run_line(event.text)

    @on(ChatInput.PastedLines)
    def pasted(self, event: ChatInput.PastedLines) -> None:
        def answer(send: bool | None) -> None:
            if send:
                for line in event.lines:
                    self.say(line)

        self.app.push_screen(ConfirmPaste(event.lines), answer)

    def prefill(self, text: str) -> None:
        self.input.value = text
        self.input.cursor_position = len(text)
        self.input.focus()

    def say(self, text: str, kind: str = "text") -> None:
        if self.current is None:
            self.notify("join a channel first: /join #name", severity="warning")
        elif self.node is not None:
            self.call_node("say", self.current, text, kind)
            self.view.set_marker(None)

    def run_line(self, line: str) -> None:
        run_line(self, line)
