"""The sidebar's "Direct" part: one line per direct conversation, with its
unread count; selecting one switches to it as a channel would. The other
person's nick is theirs to choose: shown inert, never read as markup."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from chat_app.inert_text import inert
from chat_app.tui.state import ClientState, is_direct
from chat_app.tui.widgets.channel_list import ChannelList


class DirectList(OptionList):
    DEFAULT_CSS = """
    DirectList {
        height: auto;
        max-height: 30%;
        border: none;
        border-top: hkey $primary 30%;
        border-title-color: $text-muted;
        padding: 0;
        background: $panel;
    }
    """

    def on_mount(self) -> None:
        self.border_title = "Direct"

    def show_state(self, state: ClientState) -> None:
        self.update_conversations([(name, state.label(name[1:], inert(state.direct_nicks.get(name, name[1:9]))),
                                    model.unread) for name, model in state.channels.items() if is_direct(name)],
                                  state.current)

    def update_conversations(self, rows: list[tuple[str, str, int]], current: str | None) -> None:
        """``rows``: (conversation, the other person's nick as shown, unread), in sidebar order."""
        self.clear_options()
        self.display = bool(rows)
        for channel, nick, unread in rows:
            label = Text.assemble(f"@{inert(nick)}", (f"  {unread}", "bold red") if unread else "")
            self.add_option(Option(label, id=channel))
        names = [channel for channel, _, _ in rows]
        self.highlighted = names.index(current) if current in names else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(ChannelList.Selected(event.option.id))
