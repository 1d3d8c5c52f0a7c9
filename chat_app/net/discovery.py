"""Finding peers on the LAN with mDNS/DNS-SD (zeroconf).

Each peer registers ``<peer id>._sds-chat._udp.local.`` whose TXT record
carries its id, its public signing key (hex) and the key's fingerprint, nick,
channels and protocol version, whose SRV record carries
its UDP port, and whose A/AAAA records carry every address it can be reached
at (see ``addresses.py``); it browses the same type and reports peers
appearing, changing and leaving. Several peers on one host work: each has its
own port. mDNS itself runs over IPv4 multicast; the records it carries list
IPv6 addresses too.

The id is the hash of the key (``chat_app.crypto.sender_id_of``), so an
announcement whose key does not hash to its id is ignored: nobody can
announce someone else's id with their own key. (Announcements are not
signed; the datagrams are, and they decide what a peer says.) A nick that
breaks the nick rule (``chat_app.wire_rule.nick_problem``: control characters,
bidirectional overrides) is dropped, as if none were announced, and counted
(``stats["bad_nick"]``); the peer is still found.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from chat_app.bounded import Latest
from chat_app.channel_names import is_link_name
from chat_app.crypto import fingerprint, sender_id_of
from chat_app.wire_rule import nick_problem
from zeroconf import IPVersion, ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

log = logging.getLogger(__name__)

SERVICE_TYPE = "_sds-chat._udp.local."
PROTOCOL_VERSION = "1"
UNNAMED = "?"
"""The nick of a peer that announces none (or one the nick rule refuses)."""
LISTEN_S = 0.3
"""How long a starting peer browses before it announces itself: the others answer a
query within 20-120 ms (RFC 6762 6), and resolving what they announce takes a moment more."""
GOODBYE_S = 2.0
"""How long quitting waits for the mDNS goodbye to go out."""
NAMES_KEPT = 4096
"""Service names remembered with their peer id, for their goodbye: the latest
resolved (a name that never says goodbye stays in zeroconf's cache for its
record's time to live, 75 minutes; anyone may make keys and names)."""


@dataclass(frozen=True)
class PeerInfo:
    peer_id: str
    nick: str
    addresses: tuple[str, ...]
    port: int
    channels: tuple[str, ...]
    key: bytes = b""  # the public signing key the id is the hash of
    svs: tuple[str, ...] = ()  # which of ``channels`` run on State Vector Sync (the rest: SDS)


class Discovery:
    def __init__(
        self,
        peer: PeerInfo,
        on_seen: Callable[[PeerInfo], None],
        on_gone: Callable[[str], None],
        interface: str | None = None,
    ) -> None:
        self.me = peer
        self._on_seen = on_seen
        self._on_gone = on_gone
        self._interface = interface
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._info: AsyncServiceInfo | None = None
        self._names: Latest[str, str] = Latest(NAMES_KEPT)  # service name -> peer id, for its goodbye (``_found``)
        self._tasks: set[asyncio.Task] = set()
        self._held: list[PeerInfo] | None = None  # peers found before we announced ourselves (``start``)
        self.stats: Counter[str] = Counter()

    def _service_info(self) -> AsyncServiceInfo:
        me = self.me
        return AsyncServiceInfo(
            SERVICE_TYPE,
            f"{me.peer_id}.{SERVICE_TYPE}",
            parsed_addresses=list(me.addresses),
            port=me.port,
            server=f"{me.peer_id}.local.",
            properties={"id": me.peer_id, "key": me.key.hex(), "fp": fingerprint(me.key).replace(" ", ""),
                        "nick": me.nick, "ch": ",".join(me.channels), "svs": ",".join(me.svs),
                        "v": PROTOCOL_VERSION},
        )

    async def start(self) -> None:
        interfaces = [self._interface] if self._interface else None
        kwargs = {"interfaces": interfaces} if interfaces else {}
        self._zc = AsyncZeroconf(ip_version=IPVersion.V4Only, **kwargs)
        self._info = self._service_info()
        # Browse first: the others answer within LISTEN_S, so we know who they are (nick,
        # channels, a mailbox) before our announcement has them send us their datagrams. Who
        # we find meanwhile is told after we announced ourselves: what that has us send them
        # comes after our announcement, so they know our nick when they first hear us.
        self._held = []
        self._browser = AsyncServiceBrowser(self._zc.zeroconf, SERVICE_TYPE, handlers=[self._on_change])
        await asyncio.sleep(LISTEN_S)
        # No probe for our names (RFC 6762 8.1: a random wait, then three probes 250 ms apart,
        # about a second of every start): they are the hash of our key, so nobody can hold
        # them but us, and a probe answered by a forger would only stop us starting.
        self._keep(await self._zc.async_register_service(self._info, cooperating_responders=True))
        await asyncio.sleep(0)  # the first announcement goes out
        held, self._held = self._held, None
        for peer in held:
            self._on_seen(peer)

    async def update(self, nick: str, channels: tuple[str, ...], svs: tuple[str, ...] = ()) -> None:
        """Announce a new nick or channel list."""
        self.me = PeerInfo(self.me.peer_id, nick, self.me.addresses, self.me.port, channels, self.me.key, svs)
        if self._zc is not None:
            self._info = self._service_info()
            self._keep(await self._zc.async_update_service(self._info))

    async def stop(self) -> None:
        """Stop browsing, finish or cancel what is under way (announcements
        still being repeated, peers being resolved: left pending, asyncio
        would complain about each at exit), say goodbye, close."""
        if self._zc is None:
            return
        if self._browser is not None:
            await self._browser.async_cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._info is not None:
            goodbye = await self._zc.async_unregister_service(self._info)
            try:  # others then see us leave at once, not when our records expire
                async with asyncio.timeout(GOODBYE_S):
                    await goodbye
            except TimeoutError:
                log.debug("mDNS goodbye not sent within %s s", GOODBYE_S)
        await self._zc.async_close()
        self._zc = None

    def _keep(self, broadcast) -> None:
        """Zeroconf repeats an announcement for a while on a task of its own."""
        task = asyncio.ensure_future(broadcast)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_change(self, zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Removed:
            peer_id = self._names.pop(name, None)
            if self._held is not None:
                self._held = [peer for peer in self._held if peer.peer_id != peer_id]
            elif peer_id and peer_id != self.me.peer_id:
                self._on_gone(peer_id)
            return
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if self._zc is not None and info.load_from_cache(self._zc.zeroconf):
            # An announcement carries every record: taken now, not on a task of its own,
            # which would run only after the datagrams read in this turn of the loop - the
            # peer's first ones among them, heard before we knew its nick.
            self._found(name, info)
            return
        task = asyncio.ensure_future(self._resolve(name, info))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, name: str, info: AsyncServiceInfo) -> None:
        if self._zc is not None and await info.async_request(self._zc.zeroconf, 3000):
            self._found(name, info)

    def _found(self, name: str, info: AsyncServiceInfo) -> None:
        """A service resolved: a peer, if it is a usable one of us (its key hashing to its id)."""
        props = {k.decode(): (v or b"").decode(errors="replace") for k, v in info.properties.items()}
        addresses = info.parsed_addresses(IPVersion.All)
        if not addresses or not info.port or not props.get("id") or props.get("v") != PROTOCOL_VERSION:
            log.debug("ignoring unusable service %s", name)
            return
        if props["id"] == self.me.peer_id:
            return
        key = _key_of(props)
        if key is None:
            log.debug("ignoring %s: its key does not hash to its id", name)
            return
        self._names.put(name, props["id"])
        channels, svs = self._channels(props)
        peer = PeerInfo(props["id"], self._nick(props), tuple(addresses), info.port, channels, key, svs)
        if self._held is not None:
            self._held.append(peer)
        else:
            self._on_seen(peer)

    def _nick(self, props: dict[str, str]) -> str:
        nick = props.get("nick", UNNAMED)
        if (problem := nick_problem(nick)) is not None:
            self.stats["bad_nick"] += 1
            log.debug("dropping the nick %s announces: %s", props["id"], problem)
            return UNNAMED
        return nick

    def _channels(self, props: dict[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The channels announced, and those of them that run on SVS; a name
        no channel could have (``is_link_name``) is dropped and counted."""
        announced = [c for c in props.get("ch", "").split(",") if c]
        channels = tuple(c for c in announced if is_link_name(c))
        if dropped := len(announced) - len(channels):
            self.stats["bad_channel"] += dropped
            log.debug("dropping %d channel names %s announces", dropped, props["id"])
        return channels, tuple(c for c in props.get("svs", "").split(",") if c in channels)


def _key_of(props: dict[str, str]) -> bytes | None:
    """The announced public key, if it is the one the announced id is the hash of."""
    try:
        key = bytes.fromhex(props.get("key", ""))
    except ValueError:
        return None
    return key if len(key) == 32 and sender_id_of(key) == props["id"] else None
