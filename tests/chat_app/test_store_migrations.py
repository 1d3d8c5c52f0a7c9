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
