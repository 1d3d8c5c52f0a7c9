"""A channel's state as plain data: whole (``export_state``), or what changed
(``take_changes``), for a store that writes each step in proportion to what
the step did rather than to everything the channel holds.

The state (``STATE_VERSION`` 4) is a dict of *parts*, each replaced whole
when it changes, and *collections*, keyed dicts whose entries change one by
one. Only what stays small whatever peers send is a part; anything a peer
can grow is a collection:

    parts        "clock"   the Lamport clock, causal history, sync timing,
                           counters, datagrams not yet drained: small
                 "bloom"   how many ids our filter holds, the next id's number
    collections  "outgoing"  message id -> an own message not yet acknowledged
                 "watched"   message id -> an acknowledged one still watched
                 "incoming"  message id -> a message waiting for its history
                 "missing"   message id -> one we lack: hint, author, what it
                             is charged to, when to ask for it (SDS-R)
                 "give_up"   message id -> when to stop waiting for it
                 "responses" message id -> when to rebroadcast it (SDS-R)
                 "lost"      message id -> given up as lost (ranked)
                 "peers"     sender id  -> when last heard, its bloom filter
                 "bloom_ids" number     -> an id our filter is built from
                             (up to ``bloom_capacity``, numbered as added)

plus ``version``, ``channel_id`` and ``sender_id``, and, unless
``include_log=False``, ``log`` and ``repair_cache`` (a runtime that stores
every ``Delivered`` message itself leaves them out and passes its rows to
``restore(log=...)``: the state then stays small however long the history).
Each collection entry carries the rank that orders its collection on
restore, where the order matters, so a store may keep entries in any order.

The incremental contract. ``take_changes()`` returns what changed since the
last ``take_changes()`` or ``export_state()`` (either one starts a new
round), as plain data:

    {"parts": {name: new value, ...},                  # only parts that changed
     "entries": {collection: {key: value or None}}}    # None: the entry is gone

so a runtime saves ``export_state(include_log=False)`` once (a new channel,
or after a restore), then after every step stores ``take_changes()`` in the
same transaction as the step's delivered messages: replace each part given,
upsert each entry given, delete each entry given as None. Reading it all
back gives the dict ``export_state(include_log=False)`` would have given,
which ``restore`` takes (``apply_changes`` does exactly this on dicts, and
the tests hold ``take_changes`` to it after every step). A step that only
sends one message changes one ``outgoing`` entry and ``clock``, however many
messages wait unacknowledged; one that learns of a missing id writes that
id, however many others are missing.

States saved by earlier versions are upgraded on restore (``upgrade``).

The channel puts the state together (``Channel.export_state``,
``take_changes``, ``restore``) from its parts, each of which exports,
restores and marks what changed in its own parts and collections
(``export`` / ``changes`` / ``mark_saved`` / ``restore``); this module holds
the layout: its version, how a store applies changes, and the upgrades.
"""

from __future__ import annotations

from .errors import LocalProtocolError
from .wire import SdsMessage

STATE_VERSION = 4
COLLECTIONS = ("outgoing", "watched", "incoming", "missing", "give_up", "responses", "lost", "peers", "bloom_ids")


def apply_changes(saved: dict, changes: dict) -> dict:
    """``saved`` (an ``export_state(include_log=False)``) brought up to date
    with ``changes``, as a store does it; returns a new dict."""
    result = {**saved, **changes["parts"]}
    for name, changed in changes["entries"].items():
        collection = dict(result[name])
        for key, value in changed.items():
            if value is None:
                collection.pop(key, None)
            else:
                collection[key] = value
        result[name] = collection
    return result


def upgrade(saved: dict) -> dict:
    """``saved``, of this version or any earlier one, in this version's layout."""
    for version, step in ((1, upgrade_v1), (2, upgrade_v2), (3, upgrade_v3)):
        if saved.get("version") == version:
            saved = step(saved)
    if saved.get("version") != STATE_VERSION:
        raise LocalProtocolError(f"unknown channel state version {saved.get('version')!r}")
    return saved


def upgrade_v1(old: dict) -> dict:
    """A version-1 state (one flat dict of lists, saved whole every step) in
    the version-2 layout (``upgrade_v2`` takes it on), so data saved before
    keeps working."""
    def own(entries: list) -> dict:
        return {mid: [wire, sent_at, rank, possible_by, log_fp, resends, due]
                for rank, (mid, wire, sent_at, possible_by, log_fp, resends, due) in enumerate(entries, 1)}

    filters = {peer: (data, at) for peer, data, at in old["filters"]}
    saved = {
        "version": 2, "channel_id": old["channel_id"], "sender_id": old["sender_id"],
        "clock": {"lamport": old["lamport"], "recent": old["recent"], "sync": old["sync"],
                  "stamps": [len(old["outgoing"]) + len(old["watched"]), len(old["incoming"]), len(old["heard"]), 0],
                  "outbox": old["outbox"], "stats": old["stats"]},
        "bloom": old["bloom"],
        "repair": {"missing": old["missing"], "give_up_at": old["give_up_at"], "next_sweep": old["next_sweep"],
                   "requests": old["repair_out"], "responses": old["repair_in"], "lost": old["lost"]},
        "outgoing": own(old["outgoing"]),
        "watched": own(old["watched"]),
        "incoming": {SdsMessage.FromString(wire).message_id: [wire, received_at, gaps, rank]
                     for rank, (wire, received_at, gaps) in enumerate(old["incoming"], 1)},
        "peers": {peer: [rank, at, *filters.get(peer, (None, None))]
                  for rank, (peer, at) in enumerate(old["heard"], 1)},
    }
    for key in ("log", "repair_cache"):
        if key in old:
            saved[key] = old[key]
    return saved


def upgrade_v2(old: dict) -> dict:
    """A version-2 state, whose filter's ids were one list rewritten on every
    step, with the ids as numbered entries (version 3)."""
    bloom = old["bloom"]
    return {**old, "version": 3, "bloom": {"in_filter": bloom["in_filter"], "next": len(bloom["recent"])},
            "bloom_ids": {str(number): key for number, key in enumerate(bloom["recent"])}}


def upgrade_v3(old: dict) -> dict:
    """A version-3 state, whose missing ids, deadlines, SDS-R requests and
    responses and lost ids were one part rewritten whole whenever any of
    them changed, with each as an entry of its own (version 4). A missing id
    is charged to the first waiting message that names it, else to no one
    (a version-3 state did not say who named it)."""
    repair, clock = old["repair"], old["clock"]
    stamp = clock["stamps"][1]
    owners: dict[str, str] = {}
    for mid, (wire, *_rest) in sorted(old["incoming"].items(), key=lambda kv: kv[1][3]):
        for pb in SdsMessage.FromString(wire).causal_history:
            owners.setdefault(pb.message_id, mid)
    asked = {mid: at for mid, _hint, _sender, at in repair["requests"]}
    missing = {}
    for rank, (mid, hint, sender) in enumerate(repair["missing"], stamp + 1):
        missing[mid] = [hint, sender, owners.get(mid), "", rank, asked.get(mid)]
    stamps = [*clock["stamps"][:1], stamp + len(missing), *clock["stamps"][2:4], len(repair["lost"])]
    upgraded = {key: value for key, value in old.items() if key != "repair"}
    return {**upgraded, "version": 4, "clock": {**clock, "stamps": stamps}, "missing": missing,
            "give_up": dict(repair["give_up_at"]), "responses": dict(repair["responses"]),
            "lost": {mid: rank for rank, mid in enumerate(repair["lost"], 1)}}
