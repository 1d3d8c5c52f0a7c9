"""What names a peer on the network: a host and a UDP port.

Defined here, in a module that imports nothing, so the layers that only
name peers (the runtime, events, the peer table) need not import the
sockets that reach them (``chat_app.net.udp``).
"""

Address = tuple[str, int]
"""(host, port): an IPv4 or IPv6 address as text, and a port."""
