"""Direct conversations on the chat screen.

A direct conversation is shown as a channel is - its ``ChannelModel`` under
its name (``@`` and the other person's id), in the same channel view, its
history paged from the same store - and listed in the sidebar's "Direct"
part by the other person's nick. The reducer turns the node's direct-message
events into that: a message becomes a row (every one of theirs counts as a
mention: it was written to you), an acknowledgement marks ours as received
by the other side. ``/part`` closes a conversation: it leaves the sidebar
(and stays closed at the next start) until a message or ``/query`` opens it
again; its history stays in the store. Functions of the state (``state``),
returning effects.
"""

from __future__ import annotations

from pathlib import Path

from chat_app.store import Store, database_path
from chat_app.tui.channels import add_channel, part
from chat_app.tui.effects import Aspect, Changed, Effect, SaveSettings
from chat_app.tui.state import ClientState


def add_conversation(state: ClientState, channel: str, nick: str) -> list[Effect]:
    state.direct_nicks[channel] = nick
    effects = add_channel(state, channel)
    closed = state.settings.closed
    if channel[1:] in closed:  # a new message, or /query: open again
        closed.remove(channel[1:])
        effects.append(SaveSettings())
    return effects


def renamed(state: ClientState, peer_id: str) -> list[Effect]:
    """Call when the roster learned a new nick for ``peer_id``: the
    conversation with them is listed and titled by it, not by the nick they
    had when it opened."""
    channel, member = f"@{peer_id}", state.roster.members.get(peer_id)
    if channel not in state.direct_nicks or member is None or not member.nick \
            or state.direct_nicks[channel] == member.nick:
        return []
    state.direct_nicks[channel] = member.nick
    return [Changed(Aspect.SIDEBAR | Aspect.TITLE)]


def close(state: ClientState, channel: str) -> list[Effect]:
    """``/part`` in a direct conversation: off the screen and the sidebar,
    and not listed at the next start; the store keeps it, and the node
    still delivers (and acknowledges) what arrives."""
    if channel not in state.channels:
        return []
    state.settings.closed.append(channel[1:])
    return [*part(state, channel), SaveSettings()]


def stored_conversations(data_dir: Path) -> list[tuple[str, str]]:
    """(conversation, the other person's nick) for each one the data
    directory holds. Blocking: run it in a thread."""
    store = Store(database_path(data_dir))
    try:
        return [(f"@{p.peer_id}", p.nick or p.peer_id[:8]) for p in store.direct.peers() if p.state is not None]
    finally:
        store.close()


def listed(state: ClientState, conversations: list[tuple[str, str]]) -> list[Effect]:
    """The stored conversations (``stored_conversations``), but those closed, in the sidebar."""
    closed = set(state.settings.closed)
    return [effect for channel, nick in conversations if channel[1:] not in closed
            for effect in add_conversation(state, channel, nick)]
