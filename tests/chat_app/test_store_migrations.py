"""A database from the first schema opens, and loses the table nobody read."""

import sqlite3

from chat_app.store import DATABASE, Store, database_path
from chat_app.store.db import MIGRATIONS


def test_a_first_schema_database_is_migrated_and_keeps_its_messages(tmp_path):
    path = database_path(tmp_path)
    assert path.name == DATABASE
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0])
    old.execute("INSERT INTO channels VALUES ('general', 1)")
    old.execute("INSERT INTO peers VALUES ('p', 'bob', '10.0.0.2', 7000, 'general', 5)")
    old.execute("PRAGMA user_version=1")
    old.commit()
    old.close()
    store = Store(path)
    tables = {r[0] for r in store._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "peers" not in tables and {"messages", "channels", "channel_state", "meta"} <= tables
    assert store.joined_channels() == ["general"]
    assert store._conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    store.close()


def test_own_messages_stored_before_delivery_state_was_kept_read_as_unknown(tmp_path):
    path = database_path(tmp_path)
    old = sqlite3.connect(path)
    for script in MIGRATIONS[:3]:
        old.executescript(script)
    old.execute("INSERT INTO messages (channel, message_id, lamport, sender_id, kind, text, seq, wire, received_at, "
                "delivered_at, own) VALUES ('general', 'm1', 1, 'me', 'topic', 'old topic', 1, x'00', 1, 1, 1)")
    old.execute("PRAGMA user_version=3")
    old.commit()
    old.close()
    store = Store(path)
    (row,) = store.messages("general")
    assert (row.ack, row.ack_peers) == (None, 0)  # never kept: no glyph rather than a wrong one
    assert store.topic("general").text == "old topic" and store.ignored() == {}
    store.commit_step("general", None, [], 2, [("m1", "acknowledged", 2)])
    store.commit_step("general", None, [], 3, [("m1", "possibly_acknowledged", 1)])  # never steps back
    (row,) = store.messages("general")
    assert (row.ack, row.ack_peers) == ("acknowledged", 2)
    store.close()


def test_a_nick_ignored_before_stands_for_the_keys_that_wrote_under_it(tmp_path):
    path = database_path(tmp_path)
    old = sqlite3.connect(path)
    for script in MIGRATIONS[:8]:
        old.executescript(script)
    for sender, nick, own in (("m" * 32, "Mallory", 0), ("m" * 32, "mallory", 0), ("b" * 32, "bob", 0),
                              ("a" * 32, "mallory", 1)):
        old.execute("INSERT INTO messages (channel, message_id, lamport, sender_id, nick, kind, text, seq, wire, "
                    "received_at, delivered_at, own) VALUES ('general', ?, 1, ?, ?, 'text', 'hi', 1, x'00', 1, 1, ?)",
                    (f"{sender}{nick}", sender, nick, own))
    old.execute("INSERT INTO ignored VALUES ('mallory')")
    old.execute("PRAGMA user_version=8")
    old.commit()
    old.close()
    store = Store(path)
    assert list(store.ignored()) == ["m" * 32]  # never our own key
    store.close()
