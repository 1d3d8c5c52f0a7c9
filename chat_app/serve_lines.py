"""What ``sds-chat serve`` tells the person who started it, in lines to read.

A store peer has nobody typing, and one JSON object per delivered message
(``--json``, for scripts) tells a person little. So, without ``--json``, it
says at start where it listens, which channels it keeps (by name; a private
one it keeps blind by its tag) and whether it holds a mailbox; then a line
when a peer comes or goes or a catch-up ends, and every ``SUMMARY_EVERY_S``
what it kept since, per channel. Nicks, reasons and channel names come from
the network or from anyone's command line: every line goes through
``inert``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from chat_app import events as ev
from chat_app.inert_text import inert
from chat_app.net.addresses import hostport

SUMMARY_EVERY_S = 60.0


class ServeLines:
    """Events in, lines out (each ending in a newline, inert); no I/O of its own."""

    def __init__(self, blind: list[str], mailbox: bool, clock: Callable[[], float] = time.monotonic) -> None:
        """``blind``: the ``~tag`` of each private channel kept without its key;
        ``mailbox``: sealed direct messages are held for peers who are away."""
        self._blind, self._mailbox, self._clock = blind, mailbox, clock
        self._kept: Counter[str] = Counter()  # channel -> messages kept since the last summary
        self._caught_up: Counter[str] = Counter()  # catch-ups finished since the last summary, messages each way
        self._since = clock()
        self._peers: dict[str, tuple] = {}  # peer -> (nick, channels) as last shown

    def event(self, event: ev.AppEvent) -> str | None:
        match event:
            case ev.Ready():
                return self._ready(event)
            case ev.PeerJoined(peer_id=peer_id, nick=nick, address=address, channels=channels):  # or updated
                return self._peer(peer_id, nick, address, channels)
            case ev.PeerLeft(peer_id=peer_id, nick=nick):
                self._peers.pop(peer_id, None)
                return _lines(f"- {_who(nick, peer_id)} left")
            case ev.MessageDelivered(channel=channel):
                self._kept[channel] += 1
            case ev.CatchupFinished(received=received, sent=sent):
                self._caught_up.update({"received": received, "sent": sent, "catch-ups": 1})
            case ev.Error(reason=reason):
                return _lines(f"! {reason}")
            case ev.Bye():
                return (self.summary() or "") + _lines("stopped")
        return None

    def _peer(self, peer_id: str, nick: str | None, address, channels: tuple[str, ...] | None) -> str | None:
        """``+`` a peer new to us; ``~`` one whose nick or channels changed (a peer first heard
        from learns them from its announcement); nothing when only its address moved."""
        known = self._peers.get(peer_id)
        if known == (nick, channels):
            return None
        self._peers[peer_id] = (nick, channels)
        shared = ", ".join(_channel(c) for c in channels) if channels is not None else "channels not yet announced"
        return _lines(f"{'+' if known is None else '~'} {_who(nick, peer_id)} at {hostport(*address)}: {shared}")

    def summary(self) -> str | None:
        """What was kept and served since the last summary, in one line (None if nothing happened)."""
        now, since = self._clock(), self._since
        kept, served = self._kept, self._caught_up
        self._kept, self._caught_up, self._since = Counter(), Counter(), now
        if not kept and not served:
            return None
        kept_text = ", ".join(f"{_channel(c)} {n:,}" for c, n in sorted(kept.items())) or "nothing new"
        return _lines(f"last {now - since:.0f} s: kept {kept_text}; {served['catch-ups']:,} catch-up(s) "
                      f"finished, {served['sent']:,} messages sent, {served['received']:,} received")

    def _ready(self, ready: ev.Ready) -> str:
        where = ", ".join(ready.addresses) or "no announced address"
        names = [f"#{c}" + (" (private)" if c in ready.private else "") + (" (SVS)" if c in ready.svs else "")
                 for c in ready.channels]
        return _lines(
            f"store peer {_who(ready.nick, ready.peer_id)} listening on {where}, port {ready.port} "
            "(UDP for messages, TCP for catch-up)",
            f"keeps and serves the full history of: {', '.join(names) or 'no channel'}",
            *([f"keeps blind (encrypted, without the key): {', '.join(self._blind)}"] if self._blind else []),
            "mailbox: holds sealed direct messages for peers who are away" if self._mailbox
            else "no mailbox (serve --mailbox holds direct messages for peers who are away)",
            f"every {SUMMARY_EVERY_S:.0f} s, a line on what it kept; Ctrl+C stops it")


def _lines(*texts: str) -> str:
    return "".join(inert(text) + "\n" for text in texts)


def _who(nick: str | None, peer_id: str) -> str:
    return f"{nick or '?'} ({peer_id[:8]}…)"


def _channel(name: str) -> str:
    return name if name.startswith(("@", "~")) else f"#{name}"
