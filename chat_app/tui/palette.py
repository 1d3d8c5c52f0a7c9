"""The command palette's own commands (Ctrl+P, next to the app's themes and
quit): every slash command with a palette title in ``chat_app.commands``,
then the key-bound actions. A command that needs an argument is put in the
input line to finish; the others run."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider

from chat_app.commands import Entry, commands_for


class ChatCommands(Provider):
    """Commands of the chat screen (``self.screen``)."""

    def commands(self) -> Iterator[tuple[str, str, Callable[[], None]]]:
        """(title, help, run) for every entry of the palette."""
        chat = self.screen
        for command in commands_for("tui"):
            if command.palette is not None:
                yield command.palette, f"{command.usage}: {command.help}", self._action(command)
        yield "Search", "Ctrl+F: search this channel", chat.action_search
        yield "Switch channel", "Ctrl+K: find a channel by a few letters of its name", chat.action_switcher
        yield "Next unread channel", "Ctrl+N", chat.action_next_unread
        yield "Toggle the sidebar", "F3", chat.action_toggle_sidebar
        yield "Toggle typing indicators", "Ctrl+T", chat.action_toggle_typing
        yield "Toggle join, part and quit lines", "F4", chat.action_toggle_joins
        yield "Next theme", "F2", self.app.action_next_theme

    def _action(self, command: Entry) -> Callable[[], None]:
        chat = self.screen
        if command.prefills:
            return lambda: prefill(chat, f"{command.usage.split()[0]} {'#' if command.name == 'join' else ''}")
        return lambda: chat.run_line(command.slash)

    async def discover(self) -> Hits:
        for title, help_text, run in self.commands():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self.commands():
            if (score := matcher.match(title)) > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help_text)


def prefill(chat, text: str) -> None:
    """Put the start of a command in the input, for the user to finish."""
    chat.input.value = text
    chat.input.cursor_position = len(text)
    chat.input.focus()
