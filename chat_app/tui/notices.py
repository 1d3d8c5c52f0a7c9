"""The client's own lines in a buffer: what a command answers (``/whois``,
``/peers``, ``/names``, ``/list``, ``/lastlog``, a topic, an error), what
we are told (someone is away, a key we verified changed), written where the
user looks - in the history, as WeeChat and irssi write theirs - rather than
in a pop-up that vanishes over the input line.

Each line is a ``MessageRow`` of the client (kind ``info`` or ``error``),
never stored nor synced, placed after the newest message loaded, and never
counted as unread; like the rest of what is loaded, reading the history
again (``/ignore``, ``/clear``) lets it go. Functions of the state (``state``), returning effects.
"""

from __future__ import annotations

import time

from chat_app.tui.effects import Effect, Follow, Placed, Relayout, Toast
from chat_app.tui.model import ChannelModel, MessageRow
from chat_app.tui.state import ClientState

MARKS = {"info": "--", "error": "=!="}  # in the nick column


def add(state: ClientState, text: str, now: int, kind: str = "info", channel: str | None = None) -> list[Effect]:
    """``text`` (lines, inert when the row is made) in ``channel``, or the
    one on screen; a toast only when there is no buffer to write in."""
    model = state.channels.get(channel or state.current or "")
    if model is None:
        return [Toast(text, severity="error" if kind == "error" else "information")]
    return shown(state, model, written(state, model, text, now, kind))


def ask(state: ClientState, text: str, now: int) -> list[Effect]:
    """A question in the buffer on screen ("delete this message?"), there
    until ``answered``: one at a time, a new one takes the place of the last."""
    effects = answered(state)
    model = state.current_model
    if model is None:
        return [*effects, Toast(text)]
    row = written(state, model, text, now, "info")
    state.question = (model.name, row.message_id)
    return [*effects, *shown(state, model, row)]


def written(state: ClientState, model: ChannelModel, text: str, now: int, kind: str) -> MessageRow:
    """A notice row in ``model``, after what is loaded."""
    # Lamports are clocks in ms: at ``now`` the line stays below what is loaded
    # even when the history is read again (after /ignore), and above what comes later.
    row = local_row(state, max(model.entries[-1].lamport if len(model) else 0, now), kind, "", MARKS[kind], text, now)
    model.upsert(row)
    return row


def shown(state: ClientState, model: ChannelModel, row: MessageRow) -> list[Effect]:
    """``row``, just added to ``model``, on screen if ``model`` is."""
    if model.name != state.current:
        return []
    return [Placed(row, replaced=False), Follow()] if state.following else [Placed(row, replaced=False)]


def answered(state: ClientState) -> list[Effect]:
    """The question asked is answered (either way): its line goes."""
    if state.question is None:
        return []
    channel, row_id = state.question
    state.question = None
    model = state.channels.get(channel)
    if model is None or row_id not in model.by_id:  # read again since (/clear, /ignore): gone already
        return []
    model.remove(model.by_id[row_id])
    return [Relayout(follow=state.following)] if channel == state.current else []


def local_row(state: ClientState, lamport: int, kind: str, peer_id: str, mark: str, text: str,
              now: int) -> MessageRow:
    """A line of the client's own (a notice, a join or a part), after every
    message of ``lamport``: its id sorts after any message id."""
    return MessageRow(lamport, f"~local-{next(state.presence.ids):08d}", peer_id, mark, text, kind, now)


def when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms > 0 else "never"
