"""The command palette (Ctrl+P): every slash command that has a palette
title in ``chat_app.commands``, then the key-bound actions. A command that
needs an argument is put in the input line to finish; the others run."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.app import SystemCommand
from textual.screen import Screen

from chat_app.commands import Command, commands_for


class Palette:
    """Part of the app (it uses ``input``, ``run_line`` and the app's actions)."""

    def _prefill(self, text: str) -> None:
        field = self.input
        field.value = text
        field.cursor_position = len(text)
        field.focus()

    def _palette_action(self, command: Command) -> Callable[[], None]:
        if command.prefills:
            return lambda: self._prefill(f"{command.usage.split()[0]} {'#' if command.name == 'join' else ''}")
        return lambda: self.run_line(command.slash)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)  # the app's own: themes, quit, ...
        for command in commands_for("tui"):
            if command.palette is not None:
                yield SystemCommand(command.palette, f"{command.usage}: {command.help}", self._palette_action(command))
        yield SystemCommand("Search", "Ctrl+F: search this channel", self.action_search)
        yield SystemCommand("Next unread channel", "Ctrl+N", self.action_next_unread)
        yield SystemCommand("Toggle typing indicators", "Ctrl+T", self.action_toggle_typing)
        yield SystemCommand("Next theme", "F2", self.action_next_theme)
