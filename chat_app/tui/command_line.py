"""What a line typed into the client does: a message, or one of the slash
commands of ``chat_app.commands`` run against the node, the app or the
data directory."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from chat_app.commands import Invalid, Invocation, Say, parse
from chat_app.store import Store, database_path
from chat_app.tui.direct import is_direct
from chat_app.tui.screens import ConfirmPaste, PeersScreen

if TYPE_CHECKING:
    from chat_app.tui.chat_screen import ChatScreen


def run_line(chat: ChatScreen, line: str) -> None:
    app = chat.app
    match parse(line, "tui"):
        case Invalid(reason=reason):
            chat.notify(reason, severity="error")
        case Say(text=text, kind=kind):
            say(chat, text, kind)
        case Invocation(name="help"):
            app.action_help()
        case Invocation(name="quit"):
            app.exit()
        case Invocation() if chat.node is None:
            chat.notify("still starting…", severity="warning")
        case Invocation(name="msg") as cmd:
            chat.call_node("msg", cmd.target, cmd.text)
        case Invocation(name="query") as cmd:
            chat.call_node("query", cmd.target)
        case Invocation(name="join") as cmd:
            chat.call_node("join", cmd.channel, cmd.passphrase)
        case Invocation(name="part") as cmd:
            if channel := cmd.channel or chat.current:
                chat.direct.close(channel) if is_direct(channel) else chat.call_node("part", channel)
        case Invocation(name="nick", argument=nick):
            chat.call_node("set_nick", nick)
        case Invocation(name="topic", argument=text):
            say(chat, text, "topic") if text else chat.call_node("topic", chat.current)
        case Invocation(name="away", argument=reason):
            chat.call_node("set_away", reason)
        case Invocation(name="ignore", argument=nick):
            chat.call_node("ignore", nick)
        case Invocation(name="whois", argument=nick):
            chat.call_node("whois", nick)
        case Invocation(name="trust", argument=argument):
            chat.call_node("trust", argument)
        case Invocation(name="peers"):
            future = chat.call_node("peer_snapshot")
            future.add_done_callback(lambda f: app.call_later(app.push_screen, PeersScreen.of(f.result())))
        case Invocation(name="export", argument=path):
            out = Path(path).expanduser() if path else None
            chat.run_worker(lambda: export_history(chat, out), thread=True, group="export")


def say(chat: ChatScreen, text: str, kind: str = "text") -> None:
    if chat.current is None:
        chat.notify("join a channel first: /join #name", severity="warning")
    elif chat.node is not None:
        chat.call_node("say", chat.current, text, kind)
        chat.view.set_marker(None)


def confirm_paste(chat: ChatScreen, lines: list[str]) -> None:
    """Several lines pasted at once go out as messages only if the user says so."""
    def answer(send: bool | None) -> None:
        if send:
            for line in lines:
                say(chat, line)

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
