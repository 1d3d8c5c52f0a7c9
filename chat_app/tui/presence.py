"""Join, part, quit and nick-change lines in the channel view, dimmed, as
WeeChat shows them ("--> bob has joined #general").

They are read off what the node already reports about peers: an announcement
whose channels grew or shrank, a peer that left, a nick that changed (in an
announcement or in a message). A peer whose channels were never announced
(found by its traffic) is known to be in the channels it speaks in. The
peers found in the first seconds after start were there before us: they are
shown in the member list, not announced as joining.

The lines live in the client only (not stored, not synced). Each sits after
the newest message loaded at the moment it happened, and never counts as
unread. F4 folds them away and brings them back (the ``joins`` setting).
Functions of the state (``state``), returning effects.
"""

from __future__ import annotations

from chat_app import events as ev
from chat_app.tui.effects import Effect, Relayout, SaveSettings, Toast
from chat_app.tui.notices import local_row, shown
from chat_app.tui.state import ClientState, is_direct

ALREADY_HERE_MS = 5_000
"""Peers that appear this soon after start were there before us (mDNS finds
them within a second or two): no join line for them."""


def where(state: ClientState, peer_id: str) -> list[str]:
    """Our channels ``peer_id`` is known to be in."""
    channels = set(state.roster.channels.get(peer_id) or ()) | state.presence.spoke_in.get(peer_id, set())
    return [c for c in ours(state) if c in channels]


def ours(state: ClientState) -> list[str]:
    """Our channels: a direct conversation is no channel anyone joins or parts."""
    return [c for c in state.channels if not is_direct(c)]


def peer_changed(state: ClientState, event: ev.PeerJoined, now: int) -> list[Effect]:
    """Call before the roster takes in ``event``: it compares with what the roster knew."""
    member = state.roster.members.get(event.peer_id)
    was_here = member is not None and member.present
    before = set(where(state, event.peer_id)) if was_here else set()
    nick = event.nick or (member.nick if member else None) or event.peer_id[:8]
    effects: list[Effect] = []
    if was_here and member.nick and event.nick and member.nick != event.nick:
        for channel in before:
            effects += add(state, channel, "nick", event.peer_id, f"{member.nick} is now known as {event.nick}", now)
    if event.channels is None:
        return effects
    after = {c for c in ours(state) if c in event.channels}
    started_at = state.presence.started_at
    quiet = not was_here and started_at is not None and now - started_at < ALREADY_HERE_MS
    for channel in ours(state):
        if channel in after and channel not in before and not quiet:
            effects += add(state, channel, "join", event.peer_id, f"{nick} ({event.peer_id[:8]}) has joined #{channel}",
                           now)
        elif channel in before and channel not in after:
            effects += add(state, channel, "part", event.peer_id, f"{nick} has left #{channel}", now)
            state.presence.spoke_in.get(event.peer_id, set()).discard(channel)
    return effects


def left(state: ClientState, peer_id: str, now: int) -> list[Effect]:
    """Call before the roster marks ``peer_id`` gone."""
    member = state.roster.members.get(peer_id)
    if member is None or not member.present:
        return []
    effects = [e for channel in where(state, peer_id)
               for e in add(state, channel, "quit", peer_id, f"{member.nick or peer_id[:8]} has quit", now)]
    state.presence.spoke_in.pop(peer_id, None)
    return effects


def spoke(state: ClientState, peer_id: str, channel: str, nick: str | None, lamport: int, now: int) -> list[Effect]:
    """A message from ``peer_id``; call before the roster learns its nick.
    Only a message newer than its others can tell a new nick: an old one
    caught up from the history says the nick it had then."""
    member = state.roster.members.get(peer_id)
    presence = state.presence
    newest = lamport > presence.newest.get(peer_id, -1)
    if newest:
        presence.newest[peer_id] = lamport
    effects: list[Effect] = []
    if newest and member is not None and member.present and member.nick and nick and member.nick != nick:
        for shown_in in where(state, peer_id) or [channel]:
            effects += add(state, shown_in, "nick", peer_id, f"{member.nick} is now known as {nick}", now)
    if not is_direct(channel):
        presence.spoke_in.setdefault(peer_id, set()).add(channel)
    return effects


def my_nick(state: ClientState, nick: str, now: int) -> list[Effect]:
    return [e for channel in list(state.channels)
            for e in add(state, channel, "nick", state.peer_id, f"you are now known as {nick}", now)]


def add(state: ClientState, channel: str, kind: str, peer_id: str, text: str, now: int) -> list[Effect]:
    model = state.channels.get(channel)
    if model is None:
        return []
    arrow = {"join": "-->", "part": "<--", "quit": "<--"}.get(kind, "--")
    row = local_row(state, model.entries[-1].lamport if len(model) else 0, kind, peer_id, arrow, text, now)
    state.presence.lines.setdefault(channel, []).append(row)
    if not state.settings.joins:
        return []
    model.upsert(row)
    return shown(state, model, row)


def toggle(state: ClientState) -> list[Effect]:
    """Fold the lines away, or bring them back where they were."""
    shown = state.settings.joins = not state.settings.joins
    for channel, rows in state.presence.lines.items():
        if (model := state.channels.get(channel)) is not None:
            for row in rows:
                if shown:
                    model.upsert(row)
                elif row.message_id in model.by_id:
                    model.remove(row)
    effects: list[Effect] = [SaveSettings()]
    if state.current is not None:
        effects.append(Relayout(follow=state.following))
    return [*effects, Toast(f"join, part and quit lines {'shown' if shown else 'hidden'}")]
