"""The chat screen: it holds the widgets (sidebar, topic line, channel view,
search bar, typing line, input, status bar), keeps the client's state
(``state.ClientState``) and carries out what changes to it ask.

Every change goes one way: a node event (``reducer``) or something the user
did (``channels``, ``history``, ``presence``, ``direct``) changes the state
through ``act``, which returns effects; ``apply`` carries those out in order
- the history view moves, a toast, a page to read in a worker - and then
tells the widgets watching each changed aspect to draw it again from the
state. A small observer rather than Textual reactives: the history view must
be told which row changed (so that one arrival costs the same with 100 or
100,000 rows loaded), where a reactive says only that an attribute was
assigned; and the state stays free of Textual, its changes tested without an
app. Widgets talk up with their own messages - but for the history's keys,
which the screen carries out as the app reads them (``ChannelView.BINDINGS``
says why). Layout styles are in ``assets/chat.tcss``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Header, Input

from chat_app import events as ev
from chat_app.annotations import NOT_EDITABLE, UNEDITABLE_KINDS
from chat_app.commands import (
    Away, Clear, Close, Command, Delete, Export, Help, Invalid, Lastlog, ListChannels, Msg, Names, NodeCommand, Part,
    Quit, React, Say, Topic, Typing, Window, parse,
)
from chat_app.store import Store, database_path
from chat_app.tui import channels, direct, history, listings, notices, presence
from chat_app.tui.effects import (
    Aspect, Bell, Changed, Effect, Follow, Mentioned, OlderPlaced, Placed, ReadConversations, ReadPage, Relayout,
    Run, SaveSettings, Show, Toast, Unseen,
)
from chat_app.tui.model import MessageRow
from chat_app.tui.palette import ChatCommands
from chat_app.tui.reactions import TYPE_ONE, ReactionPicker
from chat_app.tui.read_markers import ReadMarkers
from chat_app.tui.reducer import reduce
from chat_app.tui.screens import ConfirmPaste
from chat_app.tui.search import SearchBar
from chat_app.tui.settings import Settings
from chat_app.tui.state import ClientState, is_direct
from chat_app.tui.switcher import QuickSwitcher
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.chat_input import ChatInput
from chat_app.tui.widgets.direct_list import DirectList
from chat_app.tui.widgets.key_bar import KeyBar
from chat_app.tui.widgets.member_list import MemberList
from chat_app.tui.widgets.status_bar import StatusBar
from chat_app.tui.widgets.topic_line import TopicLine
from chat_app.tui.widgets.typing_line import TypingLine

WIDE = 80  # columns from which the sidebar is shown
NARROW = 60  # columns below which the title, the status bar and the keys take their short forms


def now_ms() -> int:
    return int(time.time() * 1000)


class ChatScreen(Screen):
    COMMANDS = {ChatCommands}
    BINDINGS = [
        Binding("ctrl+f", "search", "Search", priority=True),  # at once: the keys after it are the search's
        Binding("ctrl+n", "next_unread", "Next unread"),
        Binding("ctrl+t", "toggle_typing", "Typing on/off", show=False),
        Binding("f4", "toggle_joins", "Joins on/off", show=False),
        Binding("f3", "toggle_sidebar", "Sidebar", show=False),
        Binding("ctrl+k", "switcher", "Switch", priority=True),  # over the input's "delete to the end"
        Binding("ctrl+pageup", "cycle(-1)", "Previous channel", show=False),
        Binding("ctrl+pagedown", "cycle(1)", "Next channel", show=False),
        Binding("alt+left", "cycle(-1)", "Previous channel", show=False, priority=True),  # over the input's word moves
        Binding("alt+right", "cycle(1)", "Next channel", show=False, priority=True),
        *(Binding(f"alt+{n}", f"channel_number({n})", f"Channel {n}", show=False, priority=True) for n in range(1, 10)),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        # Up and Down recall sent lines in the input: picking a message starts with Alt+Up (or Ctrl+Up),
        # next to Alt+Left/Right; then the view has the focus and Up, Down, r, e, d, a, + act on it
        Binding("alt+up", "select_message", "Pick a message", show=False, priority=True),
        Binding("ctrl+up", "select_message", "Pick a message", show=False, priority=True),
    ]

    def __init__(self, data_dir: Path, settings: Settings, *, show_typing: bool = True,
                 highlight: list[str] | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.state = ClientState(settings, ReadMarkers.load(data_dir),
                                 highlight if highlight is not None else settings.highlight, show_typing)
        self._wide: bool | None = None  # was the screen WIDE at the last resize?
        self.narrow = False  # is it narrower than NARROW?
        self._deleting: str | None = None  # the message d was pressed on once: a second d deletes it
        # Held, not queried: node events keep arriving while a modal screen is open.
        self.view = ChannelView(id="history")
        self.view.renderer.highlight_words = self.state.highlight
        self.view.renderer.label = self.state.label
        self.channel_list = ChannelList(id="channels")
        self.direct_list = DirectList(id="direct")
        self.member_list = MemberList(id="members")
        self.typing_line = TypingLine(id="typing")
        self.topic_line = TopicLine(id="topic")
        self.input = ChatInput(lambda: (list(self.state.channels), self.state.roster.nicks()), id="input")
        self.search = SearchBar(data_dir, self.view, back_to=self.input, id="search")
        self.status_bar = StatusBar(str(data_dir), id="status")
        self.key_bar = KeyBar()
        # Who draws which aspect of the state, and what each kind of effect does.
        self.watchers: tuple[tuple[Aspect, Callable[[ClientState], None]], ...] = (
            (Aspect.SIDEBAR, self.channel_list.show_state),
            (Aspect.SIDEBAR, self.direct_list.show_state),
            (Aspect.SIDEBAR, self.status_bar.show_activity),
            (Aspect.MEMBERS, self.member_list.show_state),
            (Aspect.TYPING, self.typing_line.show_state),
            (Aspect.TOPIC, self.topic_line.show_state),
            (Aspect.STATUS, self.status_bar.show_state),
            (Aspect.NICK, self.show_nick),
            (Aspect.TITLE, self.show_title),
        )
        view = self.view
        self.carry_out: dict[type, Callable] = {
            Toast: lambda e: self.app.notify(e.message, title=e.title, severity=e.severity, timeout=e.timeout),
            Mentioned: lambda e: self.app.mentioned(e.channel, e.nick, e.text),
            Bell: lambda e: self.app.bell(),
            SaveSettings: lambda e: self.app.save_settings(),
            ReadPage: self.read_page,
            ReadConversations: lambda e: self.run_worker(self.read_conversations, thread=True, group="direct"),
            Run: lambda e: self.send(e.command),
            Show: lambda e: view.show(e.model, e.marker, e.left),
            Placed: lambda e: view.placed(e.row, e.replaced),
            Follow: lambda e: view.follow(),
            Unseen: lambda e: view.mark_unseen(e.message_id),
            Relayout: self.relayout,
            OlderPlaced: lambda e: view.older_placed(e.added, e.on_top, e.anchor),
        }

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar") as self.sidebar:
                yield self.channel_list
                yield self.direct_list
                yield self.member_list
            with Vertical(id="main"):
                yield self.topic_line
                yield self.view
                yield self.search
                yield self.typing_line
                yield self.input
        yield self.status_bar
        yield self.key_bar

    def on_mount(self) -> None:
        self.input.focus()
        self.set_interval(2.0, self.refresh_status)

    def on_unmount(self) -> None:
        self.state.following = self.view.following
        channels.quitting(self.state)
        self.state.read_markers.save(self.data_dir)

    @property
    def node(self):
        bridge = self.app.bridge
        return bridge.node if bridge is not None else None

    # ------------------------------------------------- the state, one way

    def node_event(self, event: ev.AppEvent) -> None:
        self.act(reduce, event, now_ms())

    def act(self, change: Callable[..., list[Effect]], *args) -> None:
        """Change the state with ``change(state, *args)``, then carry out what it asks."""
        self.state.following = self.view.following  # the one fact of the view a change needs
        self.apply(change(self.state, *args))

    def apply(self, effects: list[Effect]) -> None:
        """Carry out ``effects`` in order; each aspect that changed is drawn once, after them."""
        changed = Aspect(0)
        for effect in effects:
            if isinstance(effect, Changed):
                changed |= effect.aspects
            else:
                self.carry_out[type(effect)](effect)
        self.show_changed(changed)

    def show_changed(self, changed: Aspect) -> None:
        """The widgets watching what ``changed`` draw it again from the state."""
        for aspect, show in self.watchers:
            if aspect & changed:
                show(self.state)

    def show_nick(self, state: ClientState) -> None:
        self.app.sub_title = state.nick
        self.view.my_nick = state.nick

    def show_title(self, state: ClientState) -> None:
        if state.current is not None:
            self.app.title = state.title(state.current) if self.narrow else f"sds-chat · {state.title(state.current)}"

    def relayout(self, effect: Relayout) -> None:
        if effect.relabel:
            self.view.history_layout.forget_drawn()
        self.view.relayout()
        if effect.follow:
            self.view.follow()

    def refresh_status(self) -> None:
        self.show_changed(Aspect.STATUS | Aspect.MEMBERS)

    def read_page(self, effect: ReadPage) -> None:
        def read() -> None:
            page = history.read_page(self.data_dir, effect.channel, effect.before)
            self.app.call_from_thread(self.act, history.page_read, effect.channel, page, effect.before)

        self.run_worker(read, thread=True, group="history")

    def read_conversations(self) -> None:
        """The direct conversations this data directory holds (a worker thread)."""
        self.app.call_from_thread(self.act, direct.listed, direct.stored_conversations(self.data_dir))

    def switch_to(self, channel: str) -> None:
        self.act(channels.switch_to, channel)

    # -------------------------------------------------- what widgets say

    @on(ChannelView.NeedOlder)
    def older(self, event: ChannelView.NeedOlder) -> None:
        self.act(history.older_page, event.channel)

    @on(ChannelView.ReachedEnd)
    def all_seen(self, event: ChannelView.ReachedEnd) -> None:
        self.act(channels.all_seen, event.channel)

    def action_pick(self, action: str) -> None:
        """r, e, d, a or + on the selected message (``ChannelView``'s keys,
        carried out as the app reads them): a command for it, sent (+1, a
        confirmed deletion), put in the input to finish, or, for a, the
        reaction picker opened."""
        row = self.view.selected_row
        if row is None:
            return
        if action in ("edit", "delete") and not row.own:
            return self.tell(f"only its author may {action} a message", "error")
        if action == "edit" and row.kind in UNEDITABLE_KINDS:
            return self.tell(NOT_EDITABLE, "error")
        if action == "delete" and self._deleting != row.message_id:
            self._deleting = row.message_id
            return self.act(notices.ask, "delete this message for everyone? d again: yes; Esc: no", now_ms())
        if action == "react":  # the selection stays marked until the picker answers
            self.app.push_screen(ReactionPicker(), lambda emoji: self.reacted(row, emoji))
            return
        if action == "delete":
            self.send(Delete(row.message_id))
        elif action == "+1":
            self.send(React(row.message_id, "+1"))
        else:
            self.to_finish(f"/{action} {row.message_id} " + (row.text if action == "edit" else ""))
        self.view_left()

    def reacted(self, row: MessageRow, emoji: str | None) -> None:
        """The reaction picker's answer: a reaction to send, the input left to
        type one in (``TYPE_ONE``), or nothing (Esc)."""
        if emoji == TYPE_ONE:
            self.to_finish(f"/react {row.message_id} ")
        elif emoji is not None:
            self.send(React(row.message_id, emoji))
        self.view_left()

    def to_finish(self, line: str) -> None:
        """``line`` in the input, the cursor at its end, for the user to finish."""
        self.input.value = line
        self.input.cursor_position = len(line)

    def action_leave_view(self) -> None:
        """Escape in the history (``ChannelView``'s key): back to the input,
        the search closed if it was open, as Escape closes it anywhere."""
        if self.search.display:
            self.search.action_close()
        self.view_left()

    def view_left(self) -> None:
        self._deleting = None
        self.act(notices.answered)
        self.view.selected = None
        self.view.refresh()
        self.set_focus(self.input)  # at once, as action_select_message says: the next key is typed

    def action_select_message(self) -> None:
        # set_focus, not view.focus(): focus() moves it only once the app has
        # handled the keys already queued, so an a read in the same burst as
        # Alt+Up would be handed to the input and typed there.
        if self.view.select_last():
            self.set_focus(self.view)

    @on(ChannelList.Selected)
    def channel_selected(self, event: ChannelList.Selected) -> None:
        if event.channel != self.state.current:
            self.switch_to(event.channel)
        self.set_focus(self.input)  # at once: what is typed next is for the channel chosen

    @on(Input.Changed, "#input")
    def typed(self, event: Input.Changed) -> None:
        if event.value and not event.value.startswith("/") and self.state.current and self.node is not None:
            self.app.bridge.execute(Typing(), self.state.current)

    @on(ChatInput.Line)
    def submitted(self, event: ChatInput.Line) -> None:
        self.run_line(event.text)

    @on(ChatInput.Refused)
    def refused(self, event: ChatInput.Refused) -> None:
        self.tell(event.reason, "error")

    def paste_answered(self, answer: ChatInput.Refused | ChatInput.PastedLines) -> None:
        """A paste the app took as it read it (``ChatApp.on_event``): refused, or asked about at once."""
        if isinstance(answer, ChatInput.Refused):
            self.refused(answer)
        else:
            self.pasted(answer)

    @on(ChatInput.PastedLines)
    def pasted(self, event: ChatInput.PastedLines) -> None:
        """Several lines pasted at once, or one too long for a message, go out
        as messages (or the paste as one multi-line message) only if the user
        says so; else the field keeps what it had."""
        def answer(how: str | None) -> None:
            if how == "one" and event.one is not None:
                sent = self.send(Say(event.one))
            else:
                sent = how == "lines" and all(self.send(Say(line)) for line in event.lines)
            if sent and event.in_field:
                self.input.value = ""
            self.set_focus(self.input)  # at once: the keys read after the answer are typed

        self.app.push_screen(ConfirmPaste(event.lines, event.whole, event.one), answer)

    # ------------------------------------------------------- typed lines

    def run_line(self, line: str) -> None:
        self.run(parse(line, "tui"))

    def run(self, command: Command | Invalid) -> None:
        """Commands that act on the node run there (``Node.execute``, as in
        headless mode); help, export, quit, closing a direct conversation and
        the commands about the buffers (``listings``) are the client's own."""
        match command:
            case Invalid(reason=reason):
                self.tell(reason, "error")
            case Help():
                self.app.action_help()
            case Quit():
                self.app.exit()
            case Export(path=path):
                self.run_worker(lambda: self.export(path), thread=True, group="export")
            case Close():
                self.run(Part())
            case Part(channel=None) if is_direct(self.state.current):
                self.act(direct.close, self.state.current)
            case Away(reason=None) if self.state.roster.my_away is None:
                self.tell("you are not away")
            case Msg(target=target, text=text) if self.state.direct_nicks.get(self.state.current) != target:
                if self.send(command):  # where it was typed, a trace of it: the message is in the conversation
                    self.tell(f"-> *{target}* {text}")
            case Topic(text=None) if self.state.current is not None:
                self.state.topic_asked.add(self.state.current)  # the answer is told in the buffer
                self.send(command)
            case Names():
                self.act(listings.names, now_ms())
            case ListChannels():
                self.act(listings.channel_list, now_ms())
            case Window(number=number):
                self.act(listings.window, number, now_ms())
            case Clear():
                self.act(listings.clear)
            case Lastlog(text=text) if self.state.current is not None:
                channel = self.state.current
                self.run_worker(lambda: self.lastlog(channel, text), thread=True, group="lastlog")
            case Lastlog():
                self.tell("join a channel first: /join #name", "error")
            case _:
                self.send(command)

    def tell(self, text: str, kind: str = "info") -> None:
        """A line of the client's own in the buffer on screen (``notices``)."""
        self.act(notices.add, text, now_ms(), kind)

    def send(self, command: NodeCommand) -> bool:
        """Run ``command`` on the node; False while it is still starting."""
        if self.node is None:
            self.tell("still starting…", "error")
            return False
        self.app.bridge.execute(command, self.state.current)
        if isinstance(command, Say) and self.state.current is not None:
            self.view.set_marker(None)  # the reader is at the newest: what they wrote follows it
        return True

    def lastlog(self, channel: str, text: str) -> None:
        """``/lastlog``: the store searched in a worker thread, the matches told in ``channel``."""
        found = listings.search(self.data_dir, channel, text)
        self.app.call_from_thread(self.act, listings.lastlog, channel, text, found, now_ms())

    def export(self, path: str | None) -> None:
        """Write every stored message (Parquet, or JSON lines by the name);
        runs in a worker thread, with a store connection of its own."""
        from chat_app.export import ExportError, default_name, export, format_for

        out = Path(path).expanduser() if path else Path.home() / default_name(time.strftime("%Y%m%d-%H%M%S"))
        store = Store(database_path(self.data_dir))
        try:
            said, kind = f"exported {export(store, self.state.peer_id, out, format_for(out))} messages to {out}", "info"
        except ExportError as exc:
            said, kind = str(exc), "error"
        finally:
            store.close()
        self.app.call_from_thread(self.tell, said, kind)

    # ------------------------------------------------------------ keys

    def action_cycle(self, step: int) -> None:
        self.act(channels.cycle, step)

    def action_channel_number(self, number: int) -> None:
        self.act(channels.number, number)

    def action_next_unread(self) -> None:
        self.act(channels.next_unread)

    def action_switcher(self) -> None:
        def chosen(channel: str | None) -> None:
            if channel in self.state.channels:
                self.switch_to(channel)
            self.set_focus(self.input)  # at once: the keys read after the answer are typed

        listed = [(name, self.state.channels[name].unread) for name in channels.sidebar_order(self.state)]
        self.app.push_screen(QuickSwitcher(listed), chosen)

    def action_page(self, direction: int) -> None:
        """PageUp/PageDown scroll the history wherever the focus is."""
        (self.view.scroll_page_up if direction < 0 else self.view.scroll_page_down)(animate=False)

    def action_toggle_joins(self) -> None:
        self.act(presence.toggle)

    def action_toggle_typing(self) -> None:
        self.act(channels.toggle_typing)

    def action_search(self) -> None:
        self.search.open()

    def on_key(self, event) -> None:
        if event.key == "escape" and self.search.display:  # wherever the focus is
            event.stop()
            self.search.action_close()

    def on_resize(self, event) -> None:
        """Below WIDE columns the sidebar folds away (F3 brings it back);
        from WIDE up it is shown again, unless hidden since. Below NARROW the
        bars keep what matters most: the channel's name, who is connected,
        the sync state, the keys for help and to quit."""
        wide, narrow = event.size.width >= WIDE, event.size.width < NARROW
        if (wide, narrow) != (self._wide, self.narrow):
            self.key_bar.fit(wide, narrow)
        if wide != self._wide:
            self._wide = wide
            self.sidebar.display = wide
        if narrow != self.narrow:
            self.narrow = self.status_bar.narrow = narrow
            self.show_changed(Aspect.TITLE | Aspect.STATUS)

    def action_toggle_sidebar(self) -> None:
        self.sidebar.display = not self.sidebar.display
