"""The database's schema, as the migrations that build it: ``Store`` runs
the ones a file has not had yet, in order, each in its own transaction, and
records how far it got in ``PRAGMA user_version``. A migration is never
changed once released; a new one is appended.
"""

MIGRATIONS: list[str] = [
    # 1: the initial schema
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB);
    CREATE TABLE channels (name TEXT PRIMARY KEY, joined_at INTEGER NOT NULL);
    CREATE TABLE messages (
        channel TEXT NOT NULL,
        message_id TEXT NOT NULL,
        lamport INTEGER NOT NULL,
        sender_id TEXT NOT NULL,
        nick TEXT,
        kind TEXT,
        text TEXT,
        seq INTEGER,
        sent_at INTEGER,
        wire BLOB NOT NULL,
        received_at INTEGER NOT NULL,
        delivered_at INTEGER NOT NULL,
        own INTEGER NOT NULL,
        gaps TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (channel, message_id)
    );
    CREATE INDEX messages_log_order ON messages (channel, lamport, message_id);
    CREATE INDEX messages_author_seq ON messages (channel, sender_id, seq);
    CREATE TABLE channel_state (channel TEXT PRIMARY KEY, state BLOB NOT NULL, saved_at INTEGER NOT NULL);
    CREATE TABLE peers (
        peer_id TEXT PRIMARY KEY, nick TEXT, host TEXT, port INTEGER, channels TEXT, last_seen INTEGER
    );
    """,
    # 2: the peers table was never read
    """
    DROP TABLE peers;
    """,
    # 3: engine state by parts and keyed entries, so a step writes only what it changed
    """
    CREATE TABLE state_part (channel TEXT NOT NULL, name TEXT NOT NULL, value BLOB NOT NULL,
                             PRIMARY KEY (channel, name));
    CREATE TABLE state_entry (channel TEXT NOT NULL, collection TEXT NOT NULL, key TEXT NOT NULL,
                              value BLOB NOT NULL, PRIMARY KEY (channel, collection, key));
    """,
    # 4: the delivery state of our own messages (what acknowledgements said so far). Own messages
    # stored before it have none: what the acknowledgements of that time said was never kept.
    """
    ALTER TABLE messages ADD COLUMN ack_state TEXT;
    ALTER TABLE messages ADD COLUMN ack_peers INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: a channel's latest topic without walking its history; nicks this user ignores
    """
    CREATE INDEX messages_kind_order ON messages (channel, kind, lamport, message_id);
    CREATE TABLE ignored (nick TEXT PRIMARY KEY);
    """,
    # 6: private channels kept blind, by a peer without their key: ciphertext by channel tag
    """
    CREATE TABLE blind (tag BLOB NOT NULL, blind_id TEXT NOT NULL, data BLOB NOT NULL, received_at INTEGER NOT NULL,
                        PRIMARY KEY (tag, blind_id));
    CREATE INDEX blind_by_time ON blind (tag, received_at);
    """,
    # 7: direct messages: the people we write to (their keys, where they were last, the MVDS state of the
    # conversation); the messages themselves go to ``messages`` under the conversation's name, ``@<their id>``
    """
    CREATE TABLE direct (peer_id TEXT PRIMARY KEY, signing_key BLOB NOT NULL, exchange_key BLOB NOT NULL,
                         nick TEXT, host TEXT, port INTEGER, state BLOB, opened_at INTEGER);
    """,
    # 8: the sync protocol each channel runs on, chosen when it is created ('sds' or 'svs')
    """
    ALTER TABLE channels ADD COLUMN protocol TEXT NOT NULL DEFAULT 'sds';
    """,
    # 9: ignoring is of a person - their key - not of a nick, which anyone may take or leave; the nick
    # is how the list names them. A nick ignored before stands for the keys that wrote under it here.
    """
    CREATE TABLE ignored_people (sender_id TEXT PRIMARY KEY, nick TEXT NOT NULL);
    INSERT OR IGNORE INTO ignored_people (sender_id, nick)
        SELECT sender_id, nick FROM messages
        WHERE own = 0 AND nick IS NOT NULL AND lower(nick) IN (SELECT nick FROM ignored);
    DROP TABLE ignored;
    """,
    # 10: replies, reactions, edits and deletions name the message they are about; what a message has become is
    # read off the ones about it, by this index, never by walking the history
    """
    ALTER TABLE messages ADD COLUMN about TEXT;
    CREATE INDEX messages_about ON messages (channel, about, lamport, message_id) WHERE about IS NOT NULL;
    """,
]
