"""Which sync protocol a channel runs on, and the conversation that speaks it.

A channel's protocol is chosen when it is created and kept in the store:
what the user asked for (``#name+svs``), else what the store already says,
else what a peer announced the channel with (so a joiner speaks what the
channel's members speak), else SDS. A channel with history cannot change
protocol: its log would mix two ways of numbering and syncing.
"""

from __future__ import annotations

from collections.abc import Container

from chat_app.runtime.conversation import Conversation
from chat_app.runtime.envelopes import Envelopes
from chat_app.runtime.fetching import Backlog
from chat_app.runtime.svs_conversation import SvsConversation
from chat_app.store import Store
from sync.sds import Config


class ProtocolMismatch(ValueError):
    """The one-line reason a channel cannot be opened under the protocol asked for."""


def open_conversation(channel: str, store: Store, envelopes: Envelopes, config: Config, backlog: Backlog,
                      now: int) -> Conversation | SvsConversation:
    if store.protocol(channel) == "svs":
        return SvsConversation(channel, store, envelopes, backlog, now)
    return Conversation(channel, store, envelopes.peer_id, config, now, envelopes.stored_wire)


def protocol_for(channel: str, asked: str | None, store: Store, link_name: str,
                 announced_svs: Container[str]) -> str:
    """The protocol to join ``channel`` with; raises ``ProtocolMismatch``."""
    known = store.protocol(channel)
    if asked is not None and known is not None and asked != known:
        raise ProtocolMismatch(f"#{channel} runs on {known.upper()} here; its history cannot move to "
                               f"{asked.upper()} (use another name)")
    return asked or known or ("svs" if link_name in announced_svs else "sds")
