"""``sds-chat doctor``: why can't I see anyone?

Prints this machine's interfaces and the addresses a peer here would announce,
browses mDNS for a few seconds and lists the peers it hears, checks that the
port is free for UDP and TCP, and says what to do when multicast is blocked.
What the announcements say (names, nicks, ids, channels) is anyone's to
write, so it is printed inert (``chat_app.inert_text``).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

from zeroconf import IPVersion, ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from chat_app.inert_text import inert
from chat_app.link_names import LinkNames
from chat_app.net.addresses import advertised_addresses, hostport, interface_addresses, usable
from chat_app.net.discovery import SERVICE_TYPE
from chat_app.peers import NOBODY_HINT

Print = Callable[[str], None]


def _interfaces(out: Print) -> None:
    out("Interfaces:")
    for i in interface_addresses():
        note = "" if usable(i.address) else "  (not announced: only this host or link can use it)"
        out(f"  {i.interface:<12} {i.address}/{i.network.prefixlen}{note}")
    announced = advertised_addresses("", ipv6=socket.has_ipv6)
    out(f"A peer here announces: {', '.join(announced) or 'nothing usable (no network interface is up)'}")


def _port(port: int, out: Print) -> None:
    if not port:
        out("Port: each start picks a free one (UDP for messages, TCP with the same number for catch-up); "
            "use --port N to fix it, e.g. for a firewall rule.")
        return
    for kind, name in ((socket.SOCK_DGRAM, "UDP"), (socket.SOCK_STREAM, "TCP")):
        probe = socket.socket(socket.AF_INET, kind)
        try:
            probe.bind(("", port))
            out(f"Port {port}/{name}: free")
        except OSError as exc:
            out(f"Port {port}/{name}: taken ({exc.strerror}) - is sds-chat already running here?")
        finally:
            probe.close()


async def _browse(seconds: float, labels: LinkNames, out: Print) -> int:
    out(f"mDNS: listening for {SERVICE_TYPE} for {seconds:g} s ...")
    try:
        zc = AsyncZeroconf(ip_version=IPVersion.V4Only)
    except OSError as exc:
        out(f"  mDNS cannot start here: {exc}")
        return 0
    names: set[str] = set()

    def seen(zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is not ServiceStateChange.Removed:
            names.add(name)

    browser = AsyncServiceBrowser(zc.zeroconf, SERVICE_TYPE, handlers=[seen])
    await asyncio.sleep(seconds)
    for name in sorted(names):
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(zc.zeroconf, 2000):
            out(f"  {inert(name)}: announced, but its details did not arrive")
            continue
        props = {k.decode(): (v or b"").decode(errors="replace") for k, v in info.properties.items()}
        where = ", ".join(hostport(a, info.port) for a in info.parsed_addresses(IPVersion.All))
        key = _key(props.get("key", ""))
        channels = ", ".join(labels.channel(c, key) for c in props.get("ch", "").split(",") if c) or "no channels"
        out(inert(f"  {props.get('nick', '?')} ({props.get('id', '?')[:12]}) at {where}  {channels}"))
    await browser.async_cancel()
    await zc.async_close()
    return len(names)


def _key(text: str) -> bytes | None:
    """The public key an announcement carries, if it is one (only used to name its mailbox)."""
    try:
        key = bytes.fromhex(text)
    except ValueError:
        return None
    return key if len(key) == 32 else None


def doctor(seconds: float, port: int, names: LinkNames | None = None, out: Print = print) -> int:
    """``names``: what this data directory knows, to name private channels and mailboxes."""
    _interfaces(out)
    _port(port, out)
    seen = asyncio.run(_browse(seconds, names or LinkNames(), out))
    if seen:
        out(f"mDNS works here: {seen} peer(s) seen.")
    else:
        out("  nobody answered.")
        out(NOBODY_HINT)
    return 0
