"""Direct conversations on the chat screen.

A direct conversation is shown as a channel is - its ``ChannelModel`` under
its name (``@`` and the other person's id), in the same channel view, its
history paged from the same store - and listed in the sidebar's "Direct"
part by the other person's nick. This module turns the node's direct-message
events into that: a message becomes a row (every one of theirs counts as a
mention: it was written to you), an acknowledgement marks ours as received
by the other side. ``/part`` closes a conversation: it leaves the sidebar
(and stays closed at the next start) until a message or ``/query`` opens it
again; its history stays in the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_app import events as ev
from chat_app.inert_text import inert
from chat_app.store import Store, database_path
from chat_app.tui.model import Member
from chat_app.tui.widgets.direct_list import DirectList

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen


def is_direct(channel: str | None) -> bool:
    return bool(channel) and channel.startswith("@")


class DirectPart:
    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat
        self.nicks: dict[str, str] = {}  # conversation -> the other person's nick
        self.list = DirectList(id="direct")

    def handle(self, event: ev.AppEvent) -> bool:
        """Show a direct-message event; False if it is not one."""
        match event:
            case ev.Ready():
                self.chat.run_worker(self._stored_conversations, thread=True, group="direct")
                return False  # the channels' handler has its part too
            case ev.DmOpened(channel=channel, peer_id=peer_id, nick=nick):
                self.add(channel, nick or peer_id[:8])
                self.chat.switch_to(channel)
            case ev.DmDelivered() as e:
                self.delivered(e)
            case ev.DmAcknowledged(channel=channel, message_id=mid):
                self.chat.events.acknowledged(ev.MessageAcknowledged(channel, mid, "acknowledged", 1))
            case _:
                return False
        return True

    def add(self, channel: str, nick: str) -> None:
        self.nicks[channel] = nick
        self.chat.add_channel(channel)
        settings = self.chat.settings
        if channel[1:] in settings.closed:  # a new message, or /query: open again
            settings.closed.remove(channel[1:])
            self.chat.app.save_settings()

    def close(self, channel: str) -> None:
        """``/part`` in a direct conversation: off the screen and the sidebar,
        and not listed at the next start; the store keeps it, and the node
        still delivers (and acknowledges) what arrives."""
        if channel not in self.chat.models:
            return
        self.chat.events.parted(channel)
        self.chat.settings.closed.append(channel[1:])
        self.chat.app.save_settings()

    def members(self, channel: str) -> list[Member]:
        """Who a direct conversation is with, as the member list shows them
        (you are added by the list): the other person, present or not."""
        peer_id = channel[1:]
        known = self.chat.roster.members.get(peer_id)
        return [known or Member(peer_id, self.nicks.get(channel), 0, present=False)]

    def delivered(self, event: ev.DmDelivered) -> None:
        if event.peer_nick:
            self.nicks[event.channel] = event.peer_nick
        if event.channel not in self.chat.models:
            self.add(event.channel, self.nicks.get(event.channel) or event.peer_id[:8])
        model = self.chat.models[event.channel]
        unread_before = model.unread
        self.chat.events.show_message(ev.MessageDelivered(
            event.channel, 0, event.message_id, event.sender_id, event.timestamp, event.nick, event.kind, event.text,
            None, event.own))
        if model.unread > unread_before:  # written to us: a mention, whatever it says
            model.mentions = model.unread
            if event.channel != self.chat.current:
                self.chat.app.bell()
        self.chat.refresh_channels()

    def refresh(self) -> None:
        rows = [(name, self.nicks.get(name, name[1:9]), model.unread)
                for name, model in self.chat.models.items() if is_direct(name)]
        self.list.update_conversations(rows, self.chat.current)

    def title(self, channel: str) -> str:
        """What the header calls a conversation: ``@`` and the other person's nick (inert), or ``#channel``."""
        return f"@{inert(self.nicks.get(channel, channel[1:9]))}" if is_direct(channel) else f"#{channel}"

    def _stored_conversations(self) -> None:
        """The conversations this data directory holds (read in a worker thread)."""
        store = Store(database_path(self.chat.data_dir))
        try:
            known = [(f"@{p.peer_id}", p.nick or p.peer_id[:8]) for p in store.direct.peers() if p.state is not None]
        finally:
            store.close()
        closed = set(self.chat.settings.closed)
        for channel, nick in known:
            if channel[1:] not in closed:
                self.chat.app.call_from_thread(self.add, channel, nick)
