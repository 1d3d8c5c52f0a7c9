"""What each of the node's events changes in the client's state: one small
function per event kind, found by the event's type in ``REDUCERS``. Each
takes the state, the event and the time it arrived, changes the state, and
returns the effects for the screen (``effects``). Events the client does not
show (missing, lost, rejected, held, ...) change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chat_app import events as ev
from chat_app.annotations import CHANGING_KINDS, reaction_line
from chat_app.runtime.typing_indicator import TYPING_EXPIRES_MS
from chat_app.commands import Whois
from chat_app.net.addresses import hostport
from chat_app.peers import NOBODY_HINT, describe
from chat_app.tui import notices, presence
from chat_app.tui.channels import add_channel, part, set_topic, switch_to
from chat_app.tui.direct import add_conversation, renamed
from chat_app.tui.effects import (
    Aspect, Bell, Changed, Effect, Follow, Mentioned, Placed, ReadConversations, Relayout, Run, SaveSettings, Toast,
    Unseen,
)
from chat_app.tui.history import ignoring
from chat_app.tui.model import MessageRow, highlighted, quoted
from chat_app.tui.state import ClientState

Reducer = Callable[[ClientState, Any, int], list[Effect]]
REDUCERS: dict[type[ev.AppEvent], Reducer] = {}


def reduce(state: ClientState, event: ev.AppEvent, now: int) -> list[Effect]:
    reducer = REDUCERS.get(type(event))
    return reducer(state, event, now) if reducer is not None else []


def reduces(*kinds: type[ev.AppEvent]) -> Callable[[Reducer], Reducer]:
    def register(reducer: Reducer) -> Reducer:
        for kind in kinds:
            REDUCERS[kind] = reducer
        return reducer

    return register


# ------------------------------------------------------------------ ourselves


@reduces(ev.Ready)
def ready(state: ClientState, event: ev.Ready, now: int) -> list[Effect]:
    state.presence.started_at = now
    state.peer_id = event.peer_id
    state.nick = event.nick
    state.private.update(event.private)
    state.svs.update(event.svs)
    effects: list[Effect] = [ReadConversations(), Changed(Aspect.NICK)]
    for channel in event.channels:
        effects += add_channel(state, channel)
    if event.channels:
        last = state.settings.last_channel
        effects += switch_to(state, last if last in event.channels else event.channels[0])
    return effects


@reduces(ev.Joined)
def joined(state: ClientState, event: ev.Joined, now: int) -> list[Effect]:
    if event.private:
        state.private.add(event.channel)
    if event.svs:
        state.svs.add(event.channel)
    return [*add_channel(state, event.channel), *switch_to(state, event.channel)]


@reduces(ev.Parted)
def parted(state: ClientState, event: ev.Parted, now: int) -> list[Effect]:
    return part(state, event.channel)


@reduces(ev.NickChanged)
def nick_changed(state: ClientState, event: ev.NickChanged, now: int) -> list[Effect]:
    effects = presence.my_nick(state, event.nick, now)
    state.nick = event.nick
    effects += [Changed(Aspect.NICK), *nicks_shared(state)]
    if state.settings.nick is not None:  # the file must not bring the old nick back
        state.settings.nick = event.nick
        effects.append(SaveSettings())
    if not state.settings.joins:  # the nick lines say it, unless folded away
        effects += notices.add(state, f"you are now known as {event.nick}", now)
    return effects


@reduces(ev.Ignoring)
def ignoring_changed(state: ClientState, event: ev.Ignoring, now: int) -> list[Effect]:
    said = "ignoring: " + (", ".join(event.nicks) or "nobody")
    return [*ignoring(state, event.sender_ids), *notices.add(state, said, now)]


@reduces(ev.CatchupStarted)
def catchup_started(state: ClientState, event: ev.CatchupStarted, now: int) -> list[Effect]:
    state.catching_up[event.address] = list(event.channels)
    return [Changed(Aspect.STATUS | Aspect.MEMBERS)]


@reduces(ev.CatchupFinished)
def caught_up(state: ClientState, event: ev.CatchupFinished, now: int) -> list[Effect]:
    state.catching_up.pop(event.address, None)
    effects: list[Effect] = [Changed(Aspect.STATUS | Aspect.MEMBERS)]
    if event.received:
        host, port = event.address
        noun = "message" if event.received == 1 else "messages"
        effects.insert(0, Toast(f"caught up: {event.received} {noun} from {host}:{port}"))
    return effects


# ---------------------------------------------------------------- what we are told


@reduces(ev.Error)
def error(state: ClientState, event: ev.Error, now: int) -> list[Effect]:
    return notices.add(state, event.reason, now, "error")


@reduces(ev.Whois)
def whois(state: ClientState, event: ev.Whois, now: int) -> list[Effect]:
    """Everyone who used the nick, as a block in the buffer: what headless
    mode prints of them. Who is verified is learned here too."""
    before = set(state.trusted)
    for person in event.people:
        (state.trusted.add if person["trusted"] else state.trusted.discard)(person["sender_id"])
    lines = [f"/whois {event.nick}: " + (f"{len(event.people)} keys use this nick" if len(event.people) > 1 else
                                         "nobody of that nick seen yet" if not event.people else "one key")]
    for p in event.people:
        addresses = ", ".join(hostport(host, port) for host, port in p["addresses"]) or "none known"
        lines += [f"{event.nick}~{p['sender_id'][:4]}  fingerprint {p['fingerprint']}"
                  + ("  ✓ verified" if p["trusted"] else "  not verified (/trust nick fingerprint)"),
                  f"  id {p['sender_id']}" + (f", before keys {p['was']}" if p.get("was") else ""),
                  f"  addresses {addresses}",
                  f"  first seen {notices.when(p['first_seen'])}, last seen {notices.when(p['last_seen'])}"]
    relabel = [Relayout(follow=state.following, relabel=True), Changed(Aspect.MEMBERS)] \
        if state.trusted != before and state.current is not None else []
    return [*notices.add(state, "\n".join(lines), now), *relabel]


@reduces(ev.Trusted)
def trusted(state: ClientState, event: ev.Trusted, now: int) -> list[Effect]:
    """Verified: /whois tells which key that is, and marks it."""
    return [*notices.add(state, f"{event.nick} verified: {event.fingerprint}", now), Run(Whois(event.nick))]


@reduces(ev.Invited)
def invited(state: ClientState, event: ev.Invited, now: int) -> list[Effect]:
    """An invitation: nothing joins until the user does."""
    who = _who(state, event.peer_id, event.nick)
    return notices.add(state, f"{who} invites you to the private channel #{event.channel}: /join #{event.channel} "
                              f"to accept (their key comes with it; no passphrase needed)", now)


@reduces(ev.InviteSent)
def invite_sent(state: ClientState, event: ev.InviteSent, now: int) -> list[Effect]:
    who = _who(state, event.peer_id, event.nick)
    return notices.add(state, f"invited {who} to #{event.channel}: they join it if they choose to", now)


def _who(state: ClientState, peer_id: str, nick: str | None) -> str:
    """A person's nick as shown: the one given, else the member list's, else the start of the id."""
    member = state.roster.members.get(peer_id)
    return state.label(peer_id, nick or (member.nick if member and member.nick else peer_id[:12]))


@reduces(ev.Verified)
def verified(state: ClientState, event: ev.Verified, now: int) -> list[Effect]:
    """Someone verified before is here with the checked key: marked, no line."""
    if event.sender_id in state.trusted:
        return []
    state.trusted.add(event.sender_id)
    return [Relayout(follow=state.following, relabel=True), Changed(Aspect.MEMBERS)] if state.current else []


@reduces(ev.KeyChanged)
def key_changed(state: ClientState, event: ev.KeyChanged, now: int) -> list[Effect]:
    warning = (f"{event.nick} speaks with ANOTHER KEY ({event.fingerprint}), not the one you verified "
               f"({event.trusted_fingerprint})")
    return [*notices.add(state, warning, now, "error"), Toast(warning, severity="error", timeout=30)]


@reduces(ev.Peers)
def peers(state: ClientState, event: ev.Peers, now: int) -> list[Effect]:
    lines = [f"/peers: {len(event.peers)} peer{'' if len(event.peers) == 1 else 's'} on the network"]
    for peer in event.peers:
        who, where = describe(peer, now)
        lines += [who, f"  {where}"]
    if not event.peers:
        lines.append(f"{NOBODY_HINT} `sds-chat doctor` checks this machine.")
    lines.append("others reach you at " + ", ".join(hostport(a, event.port) for a in event.addresses))
    return notices.add(state, "\n".join(lines), now)


# ------------------------------------------------------------------- messages


@reduces(ev.MessageDelivered, ev.MessageWaiting)
def message(state: ClientState, event: ev.MessageDelivered | ev.MessageWaiting, now: int) -> list[Effect]:
    """A message in its place, or waiting for earlier ones: a row, an unread
    count or the "new messages" rule, a mention."""
    model = state.channels.get(event.channel)
    if model is None or event.kind in CHANGING_KINDS:  # shown as what it changes (``changed``)
        return []
    delivered = isinstance(event, ev.MessageDelivered)
    own = delivered and event.own
    parent = model.by_id.get(event.about) if delivered and event.about else None
    row = MessageRow(event.lamport, event.message_id, event.sender_id, event.nick or event.sender_id[:8],
                     event.text or "(undecodable message)", event.kind or "text", event.lamport, own,
                     ack="unacknowledged" if own else None, waiting_for=0 if delivered else event.waiting_for,
                     gaps=len(event.gaps) if delivered else 0,
                     quote=quoted(parent.nick, parent.text) if parent is not None else "",
                     about=(event.about or "") if delivered else "", offer=event.offer)
    known = event.message_id in model.by_id
    effects = [] if own else presence.spoke(state, event.sender_id, model.name, event.nick, event.lamport, now)
    model.upsert(row)
    model.typing.pop(event.sender_id, None)
    if not own:
        model.spoke_at[event.sender_id] = now
    if state.roster.spoke(event.sender_id, event.nick, now):
        effects += [Changed(Aspect.MEMBERS), *nicks_shared(state), *renamed(state, event.sender_id)]
    visible = model.name == state.current
    following = visible and state.following
    if visible:
        effects.append(Placed(row, replaced=known))
    if not known and not row.own:
        if not following:
            model.unread += 1
            if visible:
                effects.append(Unseen(row.message_id))
        if highlighted(row.text, state.nick, state.highlight):
            if not visible:
                model.mentions += 1
            effects.append(Mentioned(model.name, row.nick, row.text))
        effects.append(Changed(Aspect.SIDEBAR))
    if visible:
        if following or row.own:
            effects.append(Follow())
        effects.append(Changed(Aspect.TYPING))
    return effects


@reduces(ev.MessageChanged)
def changed(state: ClientState, event: ev.MessageChanged, now: int) -> list[Effect]:
    """A message was edited, deleted or reacted to: its row shows what it became."""
    model = state.channels.get(event.channel)
    row = model.by_id.get(event.message_id) if model is not None else None
    if row is None:  # not loaded: a page read later derives it from the store
        return []
    row.changed(event.text, event.edited, event.deleted, reaction_line(event.reactions))
    if model.name != state.current:
        model.requote(row)
        return []
    return [Placed(shown, replaced=True) for shown in (row, *model.requote(row))]


@reduces(ev.MessageAcknowledged)
def acknowledged(state: ClientState, event: ev.MessageAcknowledged, now: int) -> list[Effect]:
    model = state.channels.get(event.channel)
    if model is None or not model.acknowledge(event.message_id, event.state, event.peers):
        return []
    # the mark may wrap onto a new line
    return [Placed(model.by_id[event.message_id], replaced=True)] if model.name == state.current else []


@reduces(ev.TopicChanged)
def topic_changed(state: ClientState, event: ev.TopicChanged, now: int) -> list[Effect]:
    """The topic line changes; the buffer says it too when ``/topic`` asked
    (a new topic is a row of the history already)."""
    line: list[Effect] = []
    if event.channel in state.topic_asked:
        state.topic_asked.discard(event.channel)
        by = f" (set by {event.nick})" if event.nick else ""
        line = notices.add(state, f"topic of #{event.channel}: {event.topic}{by}", now, channel=event.channel)
    return [*set_topic(state, event.channel, event.topic, event.nick), *line]


@reduces(ev.Typing)
def typing(state: ClientState, event: ev.Typing, now: int) -> list[Effect]:
    """Someone is typing - unless their message came since: a notice sent
    before the message can be read with it, in one step, and be told after it."""
    if (model := state.channels.get(event.channel)) is None:
        return []
    if event.expires_at - TYPING_EXPIRES_MS <= model.spoke_at.get(event.peer_id, -1):
        return []
    model.typing[event.peer_id] = (event.nick, event.expires_at)
    return [Changed(Aspect.TYPING)]


@reduces(ev.TypingStopped)
def typing_stopped(state: ClientState, event: ev.TypingStopped, now: int) -> list[Effect]:
    if (model := state.channels.get(event.channel)) is None:
        return []
    model.typing.pop(event.peer_id, None)
    return [Changed(Aspect.TYPING)]


# ---------------------------------------------------------------------- peers


@reduces(ev.PeerJoined, ev.PeerUpdated)
def peer_joined(state: ClientState, event: ev.PeerJoined, now: int) -> list[Effect]:
    effects = presence.peer_changed(state, event, now)
    state.roster.present(event, now)
    return [*effects, Changed(Aspect.MEMBERS), *nicks_shared(state), *renamed(state, event.peer_id)]


def nicks_shared(state: ClientState) -> list[Effect]:
    """Call when a nick changed: if that changed which nicks two keys use,
    every nick is drawn again (with or without its key suffix)."""
    shared = state.roster.shared_nicks((state.peer_id, state.nick))
    if shared == state.shared_nicks:
        return []
    state.shared_nicks = shared
    return [Relayout(follow=state.following, relabel=True), Changed(Aspect.MEMBERS | Aspect.SIDEBAR)]


@reduces(ev.PeerHeard)
def peer_heard(state: ClientState, event: ev.PeerHeard, now: int) -> list[Effect]:
    return [Changed(Aspect.MEMBERS)] if state.roster.heard(event.peer_id, event.at) else []


@reduces(ev.PeerAway)
def peer_away(state: ClientState, event: ev.PeerAway, now: int) -> list[Effect]:
    if event.peer_id == state.peer_id:
        state.roster.my_away = event.reason
        return [Changed(Aspect.MEMBERS)]
    state.roster.away(event.peer_id, event.reason)
    said = f"{event.nick} is away: {event.reason}" if event.reason else f"{event.nick} is back"
    return [*notices.add(state, said, now), Changed(Aspect.MEMBERS)]


@reduces(ev.PeerLeft)
def peer_left(state: ClientState, event: ev.PeerLeft, now: int) -> list[Effect]:
    effects = presence.left(state, event.peer_id, now)
    state.roster.left(event.peer_id)
    for model in state.channels.values():
        model.typing.pop(event.peer_id, None)
    return [*effects, Changed(Aspect.MEMBERS | Aspect.TYPING)]


# ----------------------------------------------------------- direct messages


@reduces(ev.DmOpened)
def dm_opened(state: ClientState, event: ev.DmOpened, now: int) -> list[Effect]:
    return [*add_conversation(state, event.channel, event.nick or event.peer_id[:8]),
            *switch_to(state, event.channel)]


@reduces(ev.DmDelivered)
def dm_delivered(state: ClientState, event: ev.DmDelivered, now: int) -> list[Effect]:
    """Shown as a channel's message is; every one of theirs is a mention: it was written to us."""
    channel = event.channel
    if event.peer_nick:
        state.direct_nicks[channel] = event.peer_nick
    effects: list[Effect] = []
    if channel not in state.channels:
        effects += add_conversation(state, channel, state.direct_nicks.get(channel) or event.peer_id[:8])
    model = state.channels[channel]
    unread_before = model.unread
    effects += message(state, ev.MessageDelivered(channel, 0, event.message_id, event.sender_id, event.timestamp,
                                                  event.nick, event.kind, event.text, None, event.own,
                                                  about=event.about, offer=event.offer), now)
    if model.unread > unread_before:
        model.mentions = model.unread
        if channel != state.current:
            effects.append(Bell())
    return [*effects, Changed(Aspect.SIDEBAR)]


@reduces(ev.DmAcknowledged)
def dm_acknowledged(state: ClientState, event: ev.DmAcknowledged, now: int) -> list[Effect]:
    return acknowledged(state, ev.MessageAcknowledged(event.channel, event.message_id, "acknowledged", 1), now)

from chat_app.tui import file_notices  # noqa: E402,F401  (the file events' reducers register themselves)
