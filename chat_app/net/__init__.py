"""Everything that touches the network: UDP datagrams and mDNS discovery."""
