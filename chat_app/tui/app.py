"""The sds-chat terminal client.

Layout (styles in ``assets/chat.tcss``): a sidebar with the joined channels
and the members of the current one; the channel's history; a search bar
(Ctrl+F); who is typing; the input line; a status bar; the footer.

The node runs on its own thread (``NodeThread``); its typed events arrive
here as ``NodeEvent`` messages and are handled by type. History paging
(``history.py``) and search (``search.py``) are parts of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, Header, Input

from chat_app import events as ev
from chat_app.commands import Invalid, Invocation, Say, parse
from chat_app.node import Emit, Node
from chat_app.store import Store, database_path
from chat_app.tui.bridge import NodeThread
from chat_app.tui.history import HistoryPaging
from chat_app.tui.model import ChannelModel, Entry, Member, mentions
from chat_app.tui.screens import ConfirmPaste, HelpScreen, PeersScreen
from chat_app.tui.palette import Palette
from chat_app.tui.search import HistorySearch
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView
from chat_app.tui.widgets.chat_input import ChatInput
from chat_app.tui.widgets.member_list import MemberList
from chat_app.tui.widgets.status_bar import StatusBar
from chat_app.tui.widgets.typing_line import TypingLine

ASSETS = Path(__file__).resolve().parents[2] / "assets"
THEMES = ("textual-dark", "nord", "gruvbox", "textual-light")


class NodeEvent(Message):
    def __init__(self, event: ev.AppEvent) -> None:
        super().__init__()
        self.event = event


def now_ms() -> int:
    return int(time.time() * 1000)



class ChatApp(HistoryPaging, HistorySearch, Palette, App):
    CSS_PATH = ASSETS / "chat.tcss"
    TITLE = "sds-chat"
    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("ctrl+n", "next_unread", "Next unread"),
        Binding("ctrl+t", "toggle_typing", "Typing on/off"),
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
        self.show_typing = show_typing
        self.models: dict[str, ChannelModel] = {}
        self.private: set[str] = set()  # channels marked private in the sidebar
        self.members: dict[str, Member] = {}
        self.member_channels: dict[str, tuple[str, ...] | None] = {}
        self.current: str | None = None
        self.nick = ""
        self.peer_id = ""
        self.bridge: NodeThread | None = None
        self._search_from: tuple[float, bool] | None = None
        self.catching_up: dict[ev.Address, list[str]] = {}

    # ------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="sidebar"):
                yield ChannelList(id="channels")
                yield MemberList(id="members")
            with Vertical(id="main"):
                yield ChannelView(id="history")
                yield Input(placeholder="Search this channel (Enter: older match, Esc: back)", id="search")
                yield TypingLine(id="typing")
                yield ChatInput(self._completion_candidates, id="input")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        # Held, not queried: App.query_one searches the *active* screen, and
        # node events keep arriving while a modal screen is open.
        self.view = self.query_one(ChannelView)
        self.channel_list = self.query_one(ChannelList)
        self.member_list = self.query_one(MemberList)
        self.typing_line = self.query_one(TypingLine)
        self.status_bar = self.query_one(StatusBar)
        self.search = self.query_one("#search", Input)
        self.input = self.query_one("#input", ChatInput)
        self.search.display = False
        self.input.focus()
        self.start_node()
        self.set_interval(2.0, self.refresh_status)

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

    # ------------------------------------------------------- node events

    @on(NodeEvent)
    def node_event(self, message: NodeEvent) -> None:
        match message.event:
            case ev.Ready() as e:
                self._node_started(e)
            case ev.Joined(channel=channel, private=private):
                if private:
                    self.private.add(channel)
                self._add_channel(channel)
                self.switch_to(channel)
            case ev.Parted(channel=channel):
                self._parted(channel)
            case ev.NickChanged(nick=nick):
                self._set_nick(nick)
                self.notify(f"you are now {nick}")
            case ev.TopicChanged(channel=channel, topic=topic, nick=nick):
                self.notify(f"#{channel} topic: {topic}" + (f" (set by {nick})" if nick else ""))
            case ev.PeerAway(nick=nick, reason=reason) if nick != self.nick:
                self.notify(f"{nick} is away: {reason}" if reason else f"{nick} is back")
            case ev.Ignoring(nicks=nicks):
                self.notify("ignoring: " + (", ".join(nicks) or "nobody"))
            case ev.Error(reason=reason):
                self.notify(reason, severity="error")
            case ev.Whois(nick=nick, people=people):
                self.notify("\n".join(f"{p['short']}  {p['fingerprint']}{'  verified' if p['trusted'] else ''}"
                                      for p in people) or f"nobody called {nick} seen yet", title=f"/whois {nick}")
            case ev.Trusted(nick=nick, fingerprint=fp):
                self.notify(f"{nick} verified: {fp}")
            case ev.KeyChanged() as e:
                self.notify(f"{e.nick} speaks with ANOTHER KEY ({e.fingerprint}), not the one you verified "
                            f"({e.trusted_fingerprint})", severity="error", timeout=30)
            case ev.MessageDelivered() | ev.MessageWaiting() as e:
                self._show_message(e)
            case ev.MessageAcknowledged() as e:
                self._acknowledged(e)
            case ev.CatchupStarted(address=address, channels=channels):
                self.catching_up[address] = list(channels)
                self.refresh_status()
            case ev.CatchupFinished() as e:
                self._caught_up(e)
            case ev.Typing() as e:
                self._typing(e.channel, e.peer_id, (e.nick, e.expires_at))
            case ev.TypingStopped() as e:
                self._typing(e.channel, e.peer_id, None)
            case ev.PeerJoined() as e:  # and PeerUpdated
                self._peer_present(e)
            case ev.PeerHeard(peer_id=peer_id, at=at):
                self._peer_heard(peer_id, at)
            case ev.PeerLeft(peer_id=peer_id):
                self._peer_left(peer_id)

    def _node_started(self, event: ev.Ready) -> None:
        self.peer_id = event.peer_id
        self._set_nick(event.nick)
        self.private.update(event.private)
        for channel in event.channels:
            self._add_channel(channel)
        if event.channels:
            self.switch_to(event.channels[0])

    def _set_nick(self, nick: str) -> None:
        self.nick = nick
        self.sub_title = nick
        self.view.my_nick = nick

    def _add_channel(self, channel: str) -> None:
        if channel not in self.models:
            self.models[channel] = ChannelModel(channel)
            self.load_history(channel)
        self.refresh_channels()

    def _parted(self, channel: str) -> None:
        self.models.pop(channel, None)
        if self.current == channel:
            self.current = None
            if self.models:
                self.switch_to(next(iter(self.models)))
        self.refresh_channels()

    def _show_message(self, event: ev.MessageDelivered | ev.MessageWaiting) -> None:
        model = self.models.get(event.channel)
        if model is None:
            return
        delivered = isinstance(event, ev.MessageDelivered)
        own = delivered and event.own
        waiting_for = 0 if delivered else event.waiting_for
        gaps = len(event.gaps) if delivered else 0
        entry = Entry(event.lamport, event.message_id, event.sender_id, event.nick or event.sender_id[:8],
                      event.text or "(undecodable message)", event.kind or "text", event.lamport, own,
                      ack="unacknowledged" if own else None, waiting_for=waiting_for, gaps=gaps)
        known = event.message_id in model.by_id
        model.upsert(entry)
        model.typing.pop(event.sender_id, None)
        member = self.members.get(event.sender_id)
        if member is not None:
            member.last_seen = now_ms()
            if member.nick != entry.nick and event.nick:
                member.nick = entry.nick  # learned from the message (no mDNS, or a new nick)
                self.refresh_members()
        view = self.view
        visible = model.name == self.current
        following = visible and view.following
        if visible:
            view.placed(entry, replaced=known)
        if not known and not entry.own:
            mentioned = mentions(entry.text, self.nick)
            if not visible or not following:
                model.unread += 1
                if visible and view.marker_id is None:
                    view.set_marker(entry.message_id)
            if mentioned:
                if not visible:
                    model.mentions += 1
                if self.bell_on_mention:
                    self.bell()
            self.refresh_channels()
        if visible:
            if following or entry.own:
                view.follow()
            self.refresh_typing()

    def _caught_up(self, event: ev.CatchupFinished) -> None:
        host, port = event.address
        self.catching_up.pop(event.address, None)
        if event.received:
            noun = "message" if event.received == 1 else "messages"
            self.notify(f"caught up: {event.received} {noun} from {host}:{port}")
        self.refresh_status()

    def _acknowledged(self, event: ev.MessageAcknowledged) -> None:
        model = self.models.get(event.channel)
        if model is not None and model.acknowledge(event.message_id, event.state, event.peers):
            if model.name == self.current:  # the mark may wrap onto a new line
                self.view.placed(model.by_id[event.message_id], replaced=True)

    def _typing(self, channel: str, peer_id: str, who: tuple[str, int] | None) -> None:
        model = self.models.get(channel)
        if model is None:
            return
        if who is None:
            model.typing.pop(peer_id, None)
        else:
            model.typing[peer_id] = who
        self.refresh_typing()

    def _peer_present(self, event: ev.PeerJoined) -> None:
        member = self.members.get(event.peer_id)
        if member is None:
            self.members[event.peer_id] = Member(event.peer_id, event.nick, now_ms())
        else:
            member.present, member.last_seen = True, now_ms()
            member.nick = event.nick or member.nick
        if event.channels is not None:
            self.member_channels[event.peer_id] = event.channels
        self.refresh_members()

    def _peer_heard(self, peer_id: str, at: int) -> None:
        member = self.members.get(peer_id)
        if member is not None and member.present:
            member.last_seen = max(member.last_seen, at)
            self.refresh_members()

    def _peer_left(self, peer_id: str) -> None:
        member = self.members.get(peer_id)
        if member is not None:
            member.present = False
        for model in self.models.values():
            model.typing.pop(peer_id, None)
        self.refresh_members()
        self.refresh_typing()

    # ------------------------------------------------------------ history

    @on(ChannelView.NeedOlder)
    def older(self, event: ChannelView.NeedOlder) -> None:
        model = self.models.get(event.channel)
        if model is not None and model.oldest() is not None:
            self.load_history(event.channel, model.oldest().key)

    # ----------------------------------------------------------- channels

    def switch_to(self, channel: str) -> None:
        model = self.models[channel]
        self.current = channel
        model.unread = model.mentions = 0
        self.view.show(model)
        self.refresh_channels()
        self.refresh_members()
        self.refresh_typing()
        self.title = f"sds-chat · #{channel}"

    def refresh_channels(self) -> None:
        rows = [(name, m.unread, m.mentions) for name, m in self.models.items()]
        self.channel_list.update_channels(rows, self.current, self.private)

    @on(ChannelList.Selected)
    def channel_selected(self, event: ChannelList.Selected) -> None:
        if event.channel != self.current:
            self.switch_to(event.channel)
        self.input.focus()

    def action_next_unread(self) -> None:
        names = list(self.models)
        if not names:
            return
        start = names.index(self.current) + 1 if self.current in names else 0
        for name in names[start:] + names[:start]:
            if self.models[name].unread:
                self.switch_to(name)
                return
        self.notify("no unread messages")

    # ------------------------------------------------------------ members

    def current_members(self) -> list[Member]:
        return [m for pid, m in self.members.items()
                if self.member_channels.get(pid) is None or self.current in self.member_channels[pid]]

    def refresh_members(self) -> None:
        self.member_list.show(self.nick or "you", self.current_members())

    def refresh_status(self) -> None:
        waiting = sum(len(m.waiting) for m in self.models.values())
        received = sum(len(m) for m in self.models.values())
        present = sum(1 for m in self.members.values() if m.present)
        self.status_bar.show(present, waiting, received, str(self.data_dir), len(self.catching_up))
        self.refresh_members()

    # ------------------------------------------------------------- typing

    def refresh_typing(self) -> None:
        model = self.models.get(self.current) if self.current else None
        nicks = model.typing_now(now_ms()) if model is not None and self.show_typing else []
        self.typing_line.show(nicks)

    def action_toggle_typing(self) -> None:
        self.show_typing = not self.show_typing
        self.refresh_typing()
        self.notify(f"typing indicators {'shown' if self.show_typing else 'hidden'}")

    @on(Input.Changed, "#input")
    def typed(self, event: Input.Changed) -> None:
        if event.value and not event.value.startswith("/") and self.current and self.bridge and self.bridge.node:
            self.bridge.call(self.bridge.node.typing, self.current)

    # ------------------------------------------------------------- input

    def _completion_candidates(self) -> tuple[list[str], list[str]]:
        nicks = sorted({m.nick for m in self.members.values() if m.nick})
        return list(self.models), nicks

    @on(Input.Submitted, "#input")
    def submitted(self, event: Input.Submitted) -> None:
        line = event.value.strip()
        event.input.value = ""
        if line:
            self.run_line(line)

    @on(ChatInput.PastedLines)
    def pasted(self, event: ChatInput.PastedLines) -> None:
        def answer(send: bool | None) -> None:
            if send:
                for line in event.lines:
                    self.say(line)

        self.push_screen(ConfirmPaste(event.lines), answer)

    def say(self, text: str, kind: str = "text") -> None:
        if self.current is None:
            self.notify("join a channel first: /join #name", severity="warning")
        elif self.bridge is not None and self.bridge.node is not None:
            self.bridge.call(self.bridge.node.say, self.current, text, kind)
            self.view.set_marker(None)

    def run_line(self, line: str) -> None:
        node = self.bridge.node if self.bridge else None
        match parse(line, "tui"):
            case Invalid(reason=reason):
                self.notify(reason, severity="error")
            case Say(text=text, kind=kind):
                self.say(text, kind)
            case Invocation(name="help"):
                self.action_help()
            case Invocation(name="quit"):
                self.exit()
            case Invocation() if node is None:
                self.notify("still starting…", severity="warning")
            case Invocation(name="join") as cmd:
                self.bridge.call(node.join, cmd.channel, cmd.passphrase)
            case Invocation(name="part") as cmd:
                if channel := cmd.channel or self.current:
                    self.bridge.call(node.part, channel)
            case Invocation(name="nick", argument=nick):
                self.bridge.call(node.set_nick, nick)
            case Invocation(name="topic", argument=text):
                self.say(text, "topic") if text else self.bridge.call(node.topic, self.current)
            case Invocation(name="away", argument=reason):
                self.bridge.call(node.set_away, reason)
            case Invocation(name="ignore", argument=nick):
                self.bridge.call(node.ignore, nick)
            case Invocation(name="whois", argument=nick):
                self.bridge.call(node.whois, nick)
            case Invocation(name="trust", argument=argument):
                self.bridge.call(node.trust, argument)
            case Invocation(name="peers"):
                future = self.bridge.call(node.peer_snapshot)
                future.add_done_callback(lambda f: self.call_later(self.push_screen, PeersScreen.of(f.result())))
            case Invocation(name="export", argument=path):
                self.export(Path(path).expanduser() if path else None)

    @work(thread=True, group="export")
    def export(self, out: Path | None) -> None:
        from chat_app.export import ExportError, export, format_for

        out = out or Path.home() / f"sds-chat-export-{time.strftime('%Y%m%d-%H%M%S')}.parquet"
        fmt = format_for(out)
        store = Store(database_path(self.data_dir))
        try:
            count = export(store, self.peer_id, out, fmt)
        except ExportError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
            return
        finally:
            store.close()
        self.call_from_thread(self.notify, f"exported {count} messages to {out}")

    # ------------------------------------------------------------ search

    @on(Input.Changed, "#search")
    def search_changed(self, event: Input.Changed) -> None:
        self._find(event.value, older_than=None)

    @on(Input.Submitted, "#search")
    def search_next(self, event: Input.Submitted) -> None:
        self._find(event.value, older_than=self.view.search_hit)

    def on_key(self, event) -> None:
        if event.key == "escape" and self.search.display:
            event.stop()
            self.close_search()

    # ------------------------------------------------------- the palette

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_next_theme(self) -> None:
        index = THEMES.index(self.theme) + 1 if self.theme in THEMES else 0
        self.theme = THEMES[index % len(THEMES)]
