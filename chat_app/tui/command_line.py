"""What a line typed into the client does: a message, or one of the slash
commands of ``chat_app.commands`` run against the node, the app or the
data directory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from chat_app.commands import Export, Help, Invalid, NodeCommand, Part, Quit, Say, parse
from chat_app.store import Store, database_path
from chat_app.tui.direct import is_direct
from chat_app.tui.screens import ConfirmPaste

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen


def run_line(chat: ChatScreen, line: str) -> None:
    """Commands that act on the node run there (``Node.execute``, as in
    headless mode); help, export, quit and closing a direct conversation are
    the client's own."""
    app = chat.app
    match command := parse(line, "tui"):
        case Invalid(reason=reason):
            chat.notify(reason, severity="error")
        case Help():
            app.action_help()
        case Quit():
            app.exit()
        case Export(path=path):
            out = Path(path).expanduser() if path else None
            chat.run_worker(lambda: export_history(chat, out), thread=True, group="export")
        case Part(channel=None) if is_direct(chat.current):
            chat.direct.close(chat.current)
        case _:
            send(chat, command)


def send(chat: ChatScreen, command: NodeCommand) -> None:
    if chat.node is None:
        chat.notify("still starting…", severity="warning")
        return
    chat.app.bridge.execute(command, chat.current)
    if isinstance(command, Say) and chat.current is not None:
        chat.view.set_marker(None)  # the reader is at the newest: what they wrote follows it


def confirm_paste(chat: ChatScreen, lines: list[str]) -> None:
    """Several lines pasted at once go out as messages only if the user says so."""
    def answer(confirmed: bool | None) -> None:
        if confirmed:
            for line in lines:
                send(chat, Say(line))

    chat.app.push_screen(ConfirmPaste(lines), answer)


def export_history(chat: ChatScreen, out: Path | None) -> None:
    """Write every stored message to ``out`` (Parquet by default); runs in a
    worker thread, with a store connection of its own."""
    from chat_app.export import ExportError, export, format_for

    out = out or Path.home() / f"sds-chat-export-{time.strftime('%Y%m%d-%H%M%S')}.parquet"
    store = Store(database_path(chat.data_dir))
    try:
        count = export(store, chat.peer_id, out, format_for(out))
    except ExportError as exc:
        chat.app.call_from_thread(chat.notify, str(exc), severity="error")
        return
    finally:
        store.close()
    chat.app.call_from_thread(chat.notify, f"exported {count} messages to {out}")
