"""Which addresses this peer can be reached at, and which of another peer's
addresses to try first.

A peer listening on every interface (the default) advertises every usable
address of every interface - never a loopback one, which would send other
hosts' datagrams to their own loopback. A peer bound to one address
advertises just that one (``--bind 127.0.0.1`` keeps a peer on this host).

IPv6 link-local addresses (fe80::/10) are left out: they only mean something
together with an interface index, which an mDNS record cannot carry.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import ifaddr  # zeroconf's own dependency: portable interface enumeration

ANY = ("0.0.0.0", "", "::")


@dataclass(frozen=True)
class InterfaceAddress:
    interface: str
    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    address: str

    @property
    def version(self) -> int:
        return self.network.version


def interface_addresses() -> list[InterfaceAddress]:
    """Every address of every interface of this host, loopback included."""
    found = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            address = ip.ip[0] if isinstance(ip.ip, tuple) else ip.ip  # IPv6 comes as (addr, flow, scope)
            try:
                network = ipaddress.ip_network(f"{address}/{ip.network_prefix}", strict=False)
            except ValueError:
                continue
            found.append(InterfaceAddress(adapter.nice_name, network, address))
    return found


def usable(address: str) -> bool:
    """An address another host could send to: not loopback, link-local,
    multicast or unspecified."""
    ip = ipaddress.ip_address(address)
    return not (ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified)


def advertised_addresses(bind: str, ipv6: bool, interfaces: Iterable[InterfaceAddress] | None = None) -> list[str]:
    """What to put in our mDNS record when listening on ``bind`` (``ipv6``:
    whether the socket takes IPv6 too): IPv4 first."""
    if bind not in ANY:
        return [bind]
    interfaces = interface_addresses() if interfaces is None else interfaces
    picked = [i.address for i in interfaces if usable(i.address) and (ipv6 or i.version == 4)]
    picked = list(dict.fromkeys(picked))
    return sorted(picked, key=lambda a: ipaddress.ip_address(a).version)


def rank_candidates(addresses: Iterable[str], interfaces: Iterable[InterfaceAddress] | None = None) -> list[str]:
    """Another peer's addresses, the most likely to be reachable first: those
    on a subnet one of our interfaces is on (the link the announcement can
    have come over), then other IPv4, then other IPv6; loopback only when
    nothing else is offered (a peer bound to loopback on this host)."""
    interfaces = interface_addresses() if interfaces is None else interfaces
    local_networks = [i.network for i in interfaces]

    def rank(address: str) -> tuple[int, int]:
        ip = ipaddress.ip_address(address)
        if ip.is_loopback:
            return (3, ip.version)
        on_link = any(ip.version == net.version and ip in net and not net.is_loopback for net in local_networks)
        return (0 if on_link else 1 if ip.version == 4 else 2, ip.version)

    unique = list(dict.fromkeys(addresses))
    return sorted(unique, key=rank)


def hostport(host: str, port: int) -> str:
    """``10.0.0.5:4000`` or ``[fd00::5]:4000``, as ``--peer`` takes it."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@lru_cache(maxsize=4096)  # every datagram's source: parsing it each time was 4% of a busy peer's CPU
def normalize(address: str) -> str:
    """The plain form of an address as a socket reports it (IPv4-mapped IPv6
    becomes IPv4, so one host has one spelling)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)
