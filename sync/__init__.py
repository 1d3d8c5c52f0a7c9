"""Protocol engines for sds-chat, sans-I/O.

Nothing under ``sync`` touches sockets, files, threads, clocks or event loops:
bytes and ``now`` (milliseconds) go in, events and bytes come out. The app in
``chat_app`` owns all I/O (its simulator, ``chat_app.sim``, runs the same
runtime and engines on a virtual network and clock).
"""
