"""A LAN of our own for the end-to-end tests.

Hosts are Linux network namespaces, each with one veth interface per subnet
(an IPv4 and a unique-local IPv6 address on each) plugged into a bridge that
lives in a "switch" namespace; a host may sit on
two subnets and route between them. Packet loss, duplication and blocked
multicast are nftables rules inside a host. Nothing here touches the
machine's own interfaces: every interface is created directly inside the
namespaces, so a test run can neither see nor disturb a real chat.

Names carry this process's pid, so parallel runs do not collide, and a later
run removes what a killed run left behind.
"""

from __future__ import annotations

import ctypes
import ipaddress
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass, field

PREFIX = "sdslan"
CLONE_NEWNET = 0x40000000
_counter = itertools.count()


class LanUnavailable(Exception):
    """This machine cannot build the test network (with a one-line reason)."""


def check() -> None:
    """Raise LanUnavailable unless namespaces, veth, bridges and nftables work here."""
    if os.geteuid() != 0:
        raise LanUnavailable("the LAN tests need root (network namespaces)")
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            raise LanUnavailable(f"the LAN tests need `{tool}` (iproute2 / nftables)")
    probe = f"{PREFIX}-{os.getpid()}-probe"
    try:
        _ip("netns", "add", probe)
        _ip("-n", probe, "link", "add", "br0", "type", "bridge")
        _run(["ip", "netns", "exec", probe, "nft", "add", "table", "inet", "probe"])
    except subprocess.CalledProcessError as exc:
        raise LanUnavailable(f"cannot build a network namespace here: {exc.stderr.strip()}") from None
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def sweep() -> None:
    """Remove namespaces left behind by runs whose process is gone."""
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for name in re.findall(rf"^({PREFIX}-(\d+)-\S+)", listing, re.M):
        ns, pid = name
        if not os.path.exists(f"/proc/{pid}"):
            _remove_namespace(ns)


def _run(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _ip(*args: str) -> str:
    return _run(["ip", *args])


def _remove_namespace(ns: str) -> None:
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@dataclass
class Host:
    lan: Lan
    name: str
    ns: str
    addresses: dict[str, str] = field(default_factory=dict)  # subnet -> IPv4 address
    addresses6: dict[str, str] = field(default_factory=dict)  # subnet -> IPv6 (unique local) address
    interfaces: dict[str, str] = field(default_factory=dict)  # subnet -> interface name
    router: bool = False

    @property
    def address(self) -> str:
        """The host's address on its first subnet."""
        return next(iter(self.addresses.values()))

    def prefix(self) -> list[str]:
        """Put this in front of a command to run it on this host."""
        return ["ip", "netns", "exec", self.ns]

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix(), *cmd], capture_output=True, text=True, check=check)

    def socket(self, family: int = socket.AF_INET, kind: int = socket.SOCK_DGRAM) -> socket.socket:
        """A socket that lives in this host's network (made on a thread that
        joins the namespace, which leaves the rest of the process alone)."""
        made: list = []

        def make() -> None:
            libc = ctypes.CDLL(None, use_errno=True)
            with open(f"/var/run/netns/{self.ns}") as ns:
                if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
                    made.append(OSError(ctypes.get_errno(), "setns failed"))
                    return
            made.append(socket.socket(family, kind))

        thread = threading.Thread(target=make)
        thread.start()
        thread.join()
        if isinstance(made[0], Exception):
            raise made[0]
        return made[0]

    # ------------------------------------------------------------ impairments

    def _nft(self, *rules: str) -> None:
        script = "\n".join(rules) + "\n"
        subprocess.run([*self.prefix(), "nft", "-f", "-"], input=script, text=True, check=True,
                       capture_output=True)

    def drop(self, percent: int, protocol: str | None = "udp") -> None:
        """Drop ``percent`` % of incoming packets (of ``protocol``, or all)."""
        match = f"meta l4proto {protocol} " if protocol else ""
        self._nft("table inet lan_loss {",
                  "  chain input { type filter hook input priority 0; policy accept;",
                  '    iif "lo" accept',
                  f"    {match}numgen random mod 100 < {percent} counter drop",
                  "  }", "}")

    def duplicate(self, percent: int) -> None:
        """Send ``percent`` % of outgoing packets twice."""
        rules = []
        for subnet, ifname in self.interfaces.items():
            rules += [f"table netdev lan_dup_{subnet} {{",
                      f'  chain egress {{ type filter hook egress device "{ifname}" priority 0;',
                      f'    numgen random mod 100 < {percent} counter dup to "{ifname}"', "  }", "}"]
        self._nft(*rules)

    def block_ipv4_unicast_udp(self) -> None:
        """IPv4 datagrams neither leave nor arrive, but for mDNS: the peer
        must be reached over IPv6."""
        rule = "meta l4proto udp ip daddr != 224.0.0.251 drop"
        self._nft("table ip lan_v4 {",
                  f'  chain input {{ type filter hook input priority 0; iif "lo" accept; {rule}; }}',
                  f'  chain output {{ type filter hook output priority 0; oif "lo" accept; {rule}; }}',
                  "}")

    def block_multicast(self) -> None:
        """A network that drops multicast: no mDNS in or out."""
        self._nft("table inet lan_mcast {",
                  "  chain input { type filter hook input priority 0; ip daddr 224.0.0.0/4 drop; }",
                  "  chain output { type filter hook output priority 0; ip daddr 224.0.0.0/4 drop; }",
                  "}")

    def count_sent(self) -> None:
        """Count the UDP and TCP bytes this host sends on the LAN (``sent``)."""
        self._nft("table inet lan_sent {",
                  "  chain output { type filter hook output priority 0; policy accept;",
                  '    oif "lo" accept', "    meta l4proto udp counter", "    meta l4proto tcp counter",
                  "  }", "}")

    def sent(self) -> dict[str, int]:
        """IP bytes sent so far, by protocol, since ``count_sent``."""
        listing = self.run("nft", "list", "table", "inet", "lan_sent").stdout
        return {proto: int(n) for proto, n in
                re.findall(r"meta l4proto (udp|tcp) counter packets \d+ bytes (\d+)", listing)}

    def counters(self) -> str:
        return self.run("nft", "list", "ruleset").stdout


class Lan:
    """``with Lan() as lan: a = lan.host("a")`` - hosts on one switch."""

    def __init__(self) -> None:
        self.tag = f"{PREFIX}-{os.getpid()}-{next(_counter)}"
        self.switch = f"{self.tag}-switch"
        self.hosts: dict[str, Host] = {}
        self.subnets: dict[str, int] = {}
        self._ports = itertools.count()
        _ip("netns", "add", self.switch)

    def __enter__(self) -> Lan:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _subnet(self, name: str) -> int:
        if name not in self.subnets:
            index = self.subnets[name] = len(self.subnets) + 1
            bridge = f"br{index}"
            _ip("-n", self.switch, "link", "add", bridge, "type", "bridge")
            _ip("-n", self.switch, "link", "set", bridge, "up")
        return self.subnets[name]

    def host(self, name: str, subnets: tuple[str, ...] = ("lan",), router: bool = False) -> Host:
        """A new host with one interface on each of ``subnets`` (``eth0``,
        ``eth1``, ...). A ``router`` forwards between its subnets, and the
        single-subnet hosts made after it route the other subnets through it."""
        ns = f"{self.tag}-{name}"
        _ip("netns", "add", ns)
        host = self.hosts[name] = Host(self, name, ns)
        _ip("-n", ns, "link", "set", "lo", "up")
        for i, subnet in enumerate(subnets):
            index = self._subnet(subnet)
            ifname, port = f"eth{i}", f"p{next(self._ports)}"
            _ip("link", "add", "name", ifname, "netns", ns, "type", "veth", "peer", "name", port,
                "netns", self.switch)
            _ip("-n", self.switch, "link", "set", port, "master", f"br{index}")
            _ip("-n", self.switch, "link", "set", port, "up")
            number = 1 if router else 10 + len([h for h in self.hosts.values() if subnet in h.addresses])
            address = f"10.77.{index}.{number}"
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", ifname)
            address6 = str(ipaddress.ip_address(f"fd77:0:0:{index}::{number}"))
            _ip("-n", ns, "addr", "add", f"{address6}/64", "dev", ifname, "nodad")
            _ip("-n", ns, "link", "set", ifname, "up")
            host.addresses[subnet], host.interfaces[subnet] = address, ifname
            host.addresses6[subnet] = address6
        if router:
            host.router = True
            host.run("sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
        elif (gateway := self._gateway(subnets)) is not None:
            host.run("ip", "route", "add", "default", "via", gateway)
        return host

    def _gateway(self, subnets: tuple[str, ...]) -> str | None:
        """A router's address on this host's only subnet, if there is one."""
        routers = [h for h in self.hosts.values() if h.router and subnets[0] in h.addresses]
        return routers[0].addresses[subnets[0]] if len(subnets) == 1 and routers else None

    def close(self) -> None:
        for host in self.hosts.values():
            _remove_namespace(host.ns)
        _remove_namespace(self.switch)
        self.hosts.clear()
