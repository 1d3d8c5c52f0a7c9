"""The channels the client shows - direct conversations among them, in
sidebar order - and which one is on screen: joining and leaving, the topic,
and how the reader moves between them (the sidebar, Alt+1..9, Ctrl+PgUp/PgDn
and Alt+Left/Right round the end, the quick switcher, "next unread"), always
in the order the sidebar lists them: the channels, then the direct
conversations. Each channel is shown
again where the reader left it, with a rule above the first message they
have not seen. Functions of the state (``state``), returning effects."""

from __future__ import annotations

from chat_app.tui.effects import Aspect, Bell, Changed, Effect, ReadPage, SaveSettings, Show, Toast
from chat_app.tui.model import ChannelModel
from chat_app.tui.state import ClientState, is_direct


def add_channel(state: ClientState, channel: str) -> list[Effect]:
    """A channel (or conversation) to show: its newest page is read from the store."""
    effects: list[Effect] = [Changed(Aspect.SIDEBAR)]
    if channel not in state.channels:
        state.channels[channel] = ChannelModel(channel)
        effects.insert(0, ReadPage(channel))
    return effects


def switch_to(state: ClientState, channel: str) -> list[Effect]:
    left = state.current
    leave(state)
    model = state.channels[channel]
    state.current = channel
    unread = model.last_messages(model.unread, theirs=True)  # our own never count as unread
    model.unread = model.mentions = 0
    effects: list[Effect] = [Show(model, unread[0].message_id if unread else None, left), Changed(Aspect.SWITCHED)]
    if state.settings.last_channel != channel:
        state.settings.last_channel = channel
        effects.append(SaveSettings())
    return effects


def leave(state: ClientState) -> None:
    """The reader leaves the channel on screen: if they were at its newest
    message, they have seen it all."""
    model = state.current_model
    if model is not None and state.following and (newest := model.last_messages(1)):
        state.read_markers.saw(model.name, newest[0].key)


def quitting(state: ClientState) -> None:
    """The client closes: the channel on screen is left, and a channel or
    conversation with unread messages and no read marker yet (joined, or
    opened by a message, in this run) is marked read up to just before
    them, or they would all count as seen at the next start."""
    leave(state)
    for model in state.channels.values():
        if model.unread and state.read_markers.get(model.name) is None:
            state.read_markers.saw(model.name, model.before(model.last_messages(model.unread, theirs=True)[0]))


def part(state: ClientState, channel: str) -> list[Effect]:
    """``channel`` is no longer shown; if it was on screen, the first one left is."""
    state.channels.pop(channel, None)
    state.presence.lines.pop(channel, None)
    effects: list[Effect] = []
    if state.current == channel:
        state.current = None
        if state.channels:
            effects += switch_to(state, sidebar_order(state)[0])
    return [*effects, Changed(Aspect.SIDEBAR)]


def set_topic(state: ClientState, channel: str, topic: str, nick: str | None) -> list[Effect]:
    """The channel's topic, from an event or read with its first page."""
    if (model := state.channels.get(channel)) is None:
        return []
    model.topic = (topic, nick)
    return [Changed(Aspect.TOPIC)] if channel == state.current else []


def sidebar_order(state: ClientState) -> list[str]:
    """The channels as the sidebar lists them, numbered from 1 by Alt+1..9:
    the channels in the order they were added, then the direct conversations
    (a conversation opened before a channel was joined still comes after it)."""
    names = list(state.channels)
    return [n for n in names if not is_direct(n)] + [n for n in names if is_direct(n)]


def cycle(state: ClientState, step: int) -> list[Effect]:
    """The previous or next channel in the sidebar, round the end."""
    names = sidebar_order(state)
    if names and state.current in names:
        return switch_to(state, names[(names.index(state.current) + step) % len(names)])
    return []


def number(state: ClientState, number: int) -> list[Effect]:
    """Alt+1..9: the sidebar's first to ninth channel."""
    names = sidebar_order(state)
    return switch_to(state, names[number - 1]) if number <= len(names) else [Bell()]


def next_unread(state: ClientState) -> list[Effect]:
    names = sidebar_order(state)
    start = names.index(state.current) + 1 if state.current in names else 0
    for name in names[start:] + names[:start]:
        if state.channels[name].unread:
            return switch_to(state, name)
    return [Toast("no unread messages")]


def all_seen(state: ClientState, channel: str) -> list[Effect]:
    """The reader scrolled back down to the newest message of ``channel``."""
    model = state.channels.get(channel)
    if model is not None and channel == state.current and (model.unread or model.mentions):
        model.unread = model.mentions = 0
        return [Changed(Aspect.SIDEBAR)]
    return []


def toggle_typing(state: ClientState) -> list[Effect]:
    """Ctrl+T: show who is typing, or not (kept in the settings)."""
    state.show_typing = state.settings.typing = not state.show_typing
    return [SaveSettings(), Changed(Aspect.TYPING),
            Toast(f"typing indicators {'shown' if state.show_typing else 'hidden'}")]
