"""Which channel is on screen, and how the reader moves between them: the
sidebar, Alt+1..9, Ctrl+PgUp/PgDn round the end, the quick switcher and
"next unread". Each channel is shown again where the reader left it, with a
rule above the first message they have not seen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_app.tui.direct import is_direct
from chat_app.tui.switcher import QuickSwitcher

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen


class Navigator:
    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat
        self.positions: dict[str, tuple[str, int] | None] = {}  # where the reader left each channel

    def switch_to(self, channel: str) -> None:
        chat = self.chat
        self.leave_current()
        model = chat.models[channel]
        chat.current = channel
        unread = model.last_messages(model.unread)
        marker = unread[0].message_id if unread else None
        model.unread = model.mentions = 0
        chat.view.show(model, self.positions.pop(channel, None), marker)
        chat.topic_line.show(channel, model.topic)
        self.refresh_channels()
        chat.refresh_members()
        chat.refresh_typing()
        chat.app.title = f"sds-chat · {chat.direct.title(channel)}"
        if chat.settings.last_channel != channel:
            chat.settings.last_channel = channel
            chat.app.save_settings()

    def leave_current(self) -> None:
        """Remember where the reader is in the channel on screen."""
        chat = self.chat
        model = chat.models.get(chat.current) if chat.current else None
        if model is not None:
            self.positions[model.name] = chat.view.position()
            newest = model.last_messages(1)
            if chat.view.following and newest:
                chat.read_markers.saw(model.name, newest[0].key)

    def refresh_channels(self) -> None:
        rows = [(name, m.unread, m.mentions) for name, m in self.chat.models.items() if not is_direct(name)]
        self.chat.channel_list.update_channels(rows, self.chat.current, self.chat.private, self.chat.svs)
        self.chat.direct.refresh()

    def cycle(self, step: int) -> None:
        """The previous or next channel in the sidebar, round the end."""
        names = list(self.chat.models)
        if names and self.chat.current in names:
            self.switch_to(names[(names.index(self.chat.current) + step) % len(names)])

    def number(self, number: int) -> None:
        """Alt+1..9: the sidebar's first to ninth channel."""
        names = list(self.chat.models)
        if number <= len(names):
            self.switch_to(names[number - 1])
        else:
            self.chat.app.bell()

    def open_switcher(self) -> None:
        chat = self.chat

        def chosen(channel: str | None) -> None:
            if channel in chat.models:
                self.switch_to(channel)
            chat.input.focus()

        chat.app.push_screen(QuickSwitcher([(name, m.unread) for name, m in chat.models.items()]), chosen)

    def next_unread(self) -> None:
        names = list(self.chat.models)
        start = names.index(self.chat.current) + 1 if self.chat.current in names else 0
        for name in names[start:] + names[:start]:
            if self.chat.models[name].unread:
                self.switch_to(name)
                return
        self.chat.notify("no unread messages")

    def all_seen(self, channel: str) -> None:
        """The reader scrolled back down to the newest message of ``channel``."""
        model = self.chat.models.get(channel)
        if model is not None and channel == self.chat.current and (model.unread or model.mentions):
            model.unread = model.mentions = 0
            self.refresh_channels()
