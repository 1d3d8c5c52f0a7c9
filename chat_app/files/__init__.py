"""Files in a conversation: offered as a ``file`` chat message, carried in
checked chunks over the replication port from whoever holds them (see
``manager`` for the whole flow, ``wire`` for the frames)."""
