"""The client's own commands about its buffers, answered with lines in the
buffer on screen (``notices``) as WeeChat and irssi answer them: ``/names``
(who is in this channel), ``/list`` (the channels announced on the network),
``/lastlog`` (this channel's messages holding a text, read from the store in
a worker thread), ``/clear`` (the view, not the store) and ``/window N``.
Functions of the state (``state``), returning effects, but ``search``,
which reads the store."""

from __future__ import annotations

from pathlib import Path

from chat_app.file_offer import stored_offer
from chat_app.store import Store, database_path
from chat_app.tui import channels, notices
from chat_app.tui.effects import Effect, Relayout
from chat_app.tui.history import is_ignored
from chat_app.tui.model import MessageRow
from chat_app.tui.state import ClientState, is_direct
from chat_app.tui.widgets.member_list import status

LASTLOG = 50  # matches shown, newest
NEWEST = (2**63 - 1, "~")  # after every message: where a search from the newest starts


def names(state: ClientState, now: int) -> list[Effect]:
    """Who the member list shows, as lines: online first, then away, then offline."""
    if state.current is None:
        return notices.add(state, "join a channel first: /join #name", now, "error")
    order = {"online": 0, "away": 1, "offline": 2}
    members = sorted(((status(m, now), m) for m in state.members_here()),
                     key=lambda sm: (order[sm[0]], (sm[1].nick or "").lower()))
    lines = [f"/names {state.title(state.current)}: {len(members) + 1} "
             f"({sum(s == 'online' for s, _ in members) + 1} online)",
             f"{state.nick} (you)" + (f"  away: {state.roster.my_away}" if state.roster.my_away is not None else "")]
    for state_of, m in members:
        nick = state.label(m.peer_id, m.nick or m.peer_id[:8])
        lines.append(nick + (f"  {state_of}" if state_of != "online" else "")
                     + (f": {m.away}" if state_of == "away" and m.away else ""))
    return notices.add(state, "\n".join(lines), now)


def channel_list(state: ClientState, now: int) -> list[Effect]:
    """The channels peers announced over mDNS, and ours: how many announce
    each (us included) and the protocol each runs on (ours, or as announced)."""
    members: dict[str, int] = {c: 1 for c in state.channels if not is_direct(c)}
    svs = set(state.svs)
    for peer_id, announced in state.roster.channels.items():
        member = state.roster.members.get(peer_id)
        if announced and member is not None and member.present:
            for channel in announced:
                members[channel] = members.get(channel, 0) + 1
            svs.update(state.roster.svs.get(peer_id, ()))
    lines = [f"/list: {len(members)} channel{'' if len(members) == 1 else 's'} announced on this network"]
    for channel, count in sorted(members.items(), key=lambda cc: (-cc[1], cc[0])):
        ours = channel in state.channels
        protocol = "svs" if channel in svs else "sds"
        lines.append(f"#{channel}  {count} member{'' if count == 1 else 's'}  {protocol}"
                     + ("  (joined)" if ours else "  /join to enter"))
    return notices.add(state, "\n".join(lines), now)


def window(state: ClientState, number: int, now: int) -> list[Effect]:
    """``/window N``: where Alt+N goes; a line says so when there is none."""
    order = channels.sidebar_order(state)
    if number > len(order):
        return notices.add(state, f"no window {number}: there are {len(order)}", now, "error")
    return channels.number(state, number)


def clear(state: ClientState) -> list[Effect]:
    """``/clear``: the view of this channel is emptied; the store keeps
    every message, and scrolling up no longer brings the cleared ones back."""
    model = state.current_model
    if model is None:
        return []
    model.clear_view()
    state.presence.lines.pop(model.name, None)
    return [Relayout(follow=True)]


def search(data_dir: Path, channel: str, text: str) -> list[MessageRow]:
    """The newest ``LASTLOG`` messages of ``channel`` holding ``text``, oldest
    first, but the ignored people's. Blocking: run it in a thread."""
    store = Store(database_path(data_dir))
    found: list[MessageRow] = []
    try:
        ignored = frozenset(store.ignored())
        at = NEWEST
        while len(found) < LASTLOG and (hit := store.find_before(channel, text, *at)) is not None:
            at = (hit.lamport, hit.message_id)
            if not is_ignored(hit.own, hit.sender_id, ignored):
                found.append(MessageRow(hit.lamport, hit.message_id, hit.sender_id, hit.nick or hit.sender_id[:8],
                                        hit.text or "", hit.kind or "text", hit.lamport,
                                        offer=stored_offer(hit.kind, hit.text)))
    finally:
        store.close()
    return found[::-1]


def lastlog(state: ClientState, channel: str, text: str, found: list[MessageRow], now: int) -> list[Effect]:
    """What ``search`` found, as lines in ``channel``."""
    noun = "match" if len(found) == 1 else "matches"
    head = f"/lastlog {text}: {len(found)} {noun}" + (f" (the newest {LASTLOG})" if len(found) == LASTLOG else "")
    lines = [f"{notices.when(row.time_ms)} {state.label(row.sender_id, row.nick)}: {row.text.replace(chr(10), ' ')}"
             for row in found]
    return notices.add(state, "\n".join([head, *lines]), now, channel=channel)
