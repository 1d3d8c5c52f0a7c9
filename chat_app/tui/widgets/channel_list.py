"""Joined channels with unread counts; selecting one switches to it."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from chat_app.tui.state import ClientState, is_direct


class ChannelList(OptionList):
    DEFAULT_CSS = """
    ChannelList {
        height: auto;
        max-height: 50%;
        border: none;
        padding: 0;
        background: $panel;
    }
    /* No border when focused either (OptionList's): a click focuses the list
       before it is read, and a border appearing then would move the rows down
       under the pointer - the click would pick the channel above. */
    ChannelList:focus { border: none; }
    """

    class Selected(Message):
        def __init__(self, channel: str) -> None:
            super().__init__()
            self.channel = channel

    def show_state(self, state: ClientState) -> None:
        rows = [(name, m.unread, m.mentions) for name, m in state.channels.items() if not is_direct(name)]
        self.update_channels(rows, state.current, state.private, state.svs)

    def update_channels(self, channels: list[tuple[str, int, int]], current: str | None,
                        private: set[str] = frozenset(), svs: set[str] = frozenset()) -> None:
        """``channels``: (name, unread, mentions), in sidebar order; ``private``
        ones are marked, and so are ``svs`` ones (State Vector Sync)."""
        self.clear_options()
        for name, unread, mentions in channels:
            label = f"#{name}" + ("  [dim]🔒[/]" if name in private else "") + ("  [dim]svs[/]" if name in svs else "")
            if mentions:
                label += f"  [b red]@{mentions}[/]"
            if unread:
                label += f"  [b]{unread}[/]"
            self.add_option(Option(label, id=name))
        names = [n for n, _, _ in channels]
        if current in names:  # not when a direct conversation is on screen
            self.highlighted = names.index(current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Selected(event.option.id))
