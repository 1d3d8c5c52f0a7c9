"""Members of the current channel: online, away (with the reason they gave
with ``/away``, or silent for a while) or offline, and last seen. Nicks and
reasons are the peers' own words: shown inert (``chat_app.inert_text``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

from chat_app.inert_text import inert
from chat_app.tui.model import Member, nick_colour
from chat_app.tui.state import ClientState

ONLINE_MS = 30_000


def status(member: Member, now: int) -> str:
    if not member.present:
        return "offline"
    if member.away is not None:
        return "away"
    return "online" if now - member.last_seen < ONLINE_MS else "away"


def ago(ms: int) -> str:
    seconds = max(0, ms // 1000)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


class MemberList(Static):
    DEFAULT_CSS = """
    MemberList {
        height: 1fr;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;  /* one line a member, its away reason cut short: the buffer said it whole */
        text-overflow: ellipsis;
    }
    """

    def show_state(self, state: ClientState) -> None:
        self.show(state.nick or "you", state.members_here(), my_away=state.roster.my_away, label=state.label)

    def show(self, me: str, members: list[Member], now: int | None = None, my_away: str | None = None,
             label: Callable[[str, str], str] = lambda peer_id, nick: nick) -> None:
        """``label``: how a member's (inert) nick is shown, from its id and nick."""
        now = now if now is not None else int(time.time() * 1000)
        text = Text("members\n", style="bold dim")
        text.append("◐ " if my_away is not None else "● ", style="yellow" if my_away is not None else "green")
        text.append(f"{inert(me)} (you)")
        text.append(f"  away: {inert(my_away)}\n" if my_away is not None else "\n", style="dim")
        order = {"online": 0, "away": 1, "offline": 2}
        for m in sorted(members, key=lambda m: (order[status(m, now)], (m.nick or "").lower())):
            state = status(m, now)
            dot, style = {"online": ("●", "green"), "away": ("◐", "yellow"), "offline": ("○", "dim")}[state]
            text.append(f"{dot} ", style=style)
            colour = nick_colour(m.peer_id) if state != "offline" else "dim"
            text.append(label(m.peer_id, inert(m.nick or m.peer_id[:8])), style=colour)
            if state == "away" and m.away is not None:
                text.append(f"  away: {inert(m.away)}", style="dim")
            elif state != "online":
                seen = f", {ago(now - m.last_seen)} ago" if m.last_seen else ""  # 0: not seen since we started
                text.append(f"  {state}{seen}", style="dim")
            text.append("\n")
        self.update(text)
