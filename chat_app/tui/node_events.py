"""What the node's events change on the chat screen: the channels, their
messages and delivery marks, who is around and who is typing. Events come
typed (``chat_app.events``) and are handled by type."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from chat_app import events as ev
from chat_app.tui.model import MessageRow, highlighted
from chat_app.tui.screens import PeersScreen

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen


def now_ms() -> int:
    return int(time.time() * 1000)


class NodeEvents:
    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat

    def handle(self, event: ev.AppEvent) -> None:
        match event:
            case ev.Ready() as e:
                self.started(e)
            case ev.Joined(channel=channel, private=private, svs=svs):
                if private:
                    self.chat.private.add(channel)
                if svs:
                    self.chat.svs.add(channel)
                self.chat.add_channel(channel)
                self.chat.switch_to(channel)
            case ev.Parted(channel=channel):
                self.parted(channel)
            case ev.NickChanged(old=old, nick=nick):
                self.chat.presence.my_nick(old, nick, now_ms())
                self.set_nick(nick)
                if self.chat.settings.nick is not None:  # the file must not bring the old nick back
                    self.chat.settings.nick = nick
                    self.chat.app.save_settings()
                self.chat.notify(f"you are now {nick}")
            case ev.TopicChanged(channel=channel, topic=topic, nick=nick):
                self.topic(channel, topic, nick)
                self.chat.notify(f"#{channel} topic: {topic}" + (f" (set by {nick})" if nick else ""))
            case ev.PeerAway(peer_id=peer_id, nick=nick, reason=reason):
                self.away(peer_id, nick, reason)
            case ev.Ignoring(nicks=nicks):
                self.chat.pager.ignoring(nicks)
                self.chat.notify("ignoring: " + (", ".join(nicks) or "nobody"))
            case ev.Error(reason=reason):
                self.chat.notify(reason, severity="error")
            case ev.Whois(nick=nick, people=people):
                self.chat.notify("\n".join(f"{p['short']}  {p['fingerprint']}{'  verified' if p['trusted'] else ''}"
                                           for p in people) or f"nobody called {nick} seen yet",
                                 title=f"/whois {nick}")
            case ev.Trusted(nick=nick, fingerprint=fp):
                self.chat.notify(f"{nick} verified: {fp}")
            case ev.KeyChanged() as e:
                self.chat.notify(f"{e.nick} speaks with ANOTHER KEY ({e.fingerprint}), not the one you verified "
                                 f"({e.trusted_fingerprint})", severity="error", timeout=30)
            case ev.MessageDelivered() | ev.MessageWaiting() as e:
                self.show_message(e)
            case ev.MessageAcknowledged() as e:
                self.acknowledged(e)
            case ev.CatchupStarted(address=address, channels=channels):
                self.chat.catching_up[address] = list(channels)
                self.chat.refresh_status()
            case ev.CatchupFinished() as e:
                self.caught_up(e)
            case ev.Typing() as e:
                self.typing(e.channel, e.peer_id, (e.nick, e.expires_at))
            case ev.TypingStopped() as e:
                self.typing(e.channel, e.peer_id, None)
            case ev.PeerJoined() as e:  # and PeerUpdated
                self.chat.presence.peer_changed(e, now_ms())
                self.chat.roster.present(e, now_ms())
                self.chat.refresh_members()
            case ev.PeerHeard(peer_id=peer_id, at=at):
                if self.chat.roster.heard(peer_id, at):
                    self.chat.refresh_members()
            case ev.PeerLeft(peer_id=peer_id):
                self.peer_left(peer_id)
            case ev.Peers() as e:  # the answer to /peers
                self.chat.app.push_screen(PeersScreen.of(e))

    def topic(self, channel: str, topic: str, nick: str | None) -> None:
        """The channel's topic, from an event or read with its first page."""
        if (model := self.chat.models.get(channel)) is not None:
            model.topic = (topic, nick)
            if channel == self.chat.current:
                self.chat.topic_line.show(channel, model.topic)

    def away(self, peer_id: str, nick: str | None, reason: str | None) -> None:
        roster = self.chat.roster
        if peer_id == self.chat.peer_id:
            roster.my_away = reason
        else:
            roster.away(peer_id, reason)
            self.chat.notify(f"{nick} is away: {reason}" if reason else f"{nick} is back")
        self.chat.refresh_members()

    def started(self, event: ev.Ready) -> None:
        self.chat.presence.started_at = now_ms()
        self.chat.peer_id = event.peer_id
        self.set_nick(event.nick)
        self.chat.private.update(event.private)
        self.chat.svs.update(event.svs)
        for channel in event.channels:
            self.chat.add_channel(channel)
        if event.channels:
            last = self.chat.settings.last_channel
            self.chat.switch_to(last if last in event.channels else event.channels[0])

    def set_nick(self, nick: str) -> None:
        self.chat.nick = nick
        self.chat.app.sub_title = nick
        self.chat.view.my_nick = nick

    def parted(self, channel: str) -> None:
        self.chat.models.pop(channel, None)
        self.chat.presence.forget(channel)
        if self.chat.current == channel:
            self.chat.current = None
            if self.chat.models:
                self.chat.switch_to(next(iter(self.chat.models)))
        self.chat.refresh_channels()

    def show_message(self, event: ev.MessageDelivered | ev.MessageWaiting) -> None:
        model = self.chat.models.get(event.channel)
        if model is None:
            return
        delivered = isinstance(event, ev.MessageDelivered)
        own = delivered and event.own
        row = MessageRow(event.lamport, event.message_id, event.sender_id, event.nick or event.sender_id[:8],
                         event.text or "(undecodable message)", event.kind or "text", event.lamport, own,
                         ack="unacknowledged" if own else None, waiting_for=0 if delivered else event.waiting_for,
                         gaps=len(event.gaps) if delivered else 0)
        known = event.message_id in model.by_id
        if not own:
            self.chat.presence.spoke(event.sender_id, model.name, event.nick, event.lamport, now_ms())
        model.upsert(row)
        model.typing.pop(event.sender_id, None)
        if self.chat.roster.spoke(event.sender_id, event.nick, now_ms()):
            self.chat.refresh_members()
        view = self.chat.view
        visible = model.name == self.chat.current
        following = visible and view.following
        if visible:
            view.placed(row, replaced=known)
        if not known and not row.own:
            if not visible or not following:
                model.unread += 1
                if visible and view.marker_id is None:
                    view.set_marker(row.message_id)
            if highlighted(row.text, self.chat.nick, self.chat.highlight_words):
                if not visible:
                    model.mentions += 1
                self.chat.app.mentioned(model.name, row.nick, row.text)
            self.chat.refresh_channels()
        if visible:
            if following or row.own:
                view.follow()
            self.chat.refresh_typing()

    def acknowledged(self, event: ev.MessageAcknowledged) -> None:
        model = self.chat.models.get(event.channel)
        if model is not None and model.acknowledge(event.message_id, event.state, event.peers):
            if model.name == self.chat.current:  # the mark may wrap onto a new line
                self.chat.view.placed(model.by_id[event.message_id], replaced=True)

    def caught_up(self, event: ev.CatchupFinished) -> None:
        host, port = event.address
        self.chat.catching_up.pop(event.address, None)
        if event.received:
            noun = "message" if event.received == 1 else "messages"
            self.chat.app.notify(f"caught up: {event.received} {noun} from {host}:{port}")
        self.chat.refresh_status()

    def typing(self, channel: str, peer_id: str, who: tuple[str, int] | None) -> None:
        model = self.chat.models.get(channel)
        if model is None:
            return
        if who is None:
            model.typing.pop(peer_id, None)
        else:
            model.typing[peer_id] = who
        self.chat.refresh_typing()

    def peer_left(self, peer_id: str) -> None:
        self.chat.presence.left(peer_id, now_ms())
        self.chat.roster.left(peer_id)
        for model in self.chat.models.values():
            model.typing.pop(peer_id, None)
        self.chat.refresh_members()
        self.chat.refresh_typing()
