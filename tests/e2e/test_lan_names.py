"""Our mDNS names on the test LAN: announced at once, never probed.

A peer's service and host names are its peer id, the hash of its key, so
nobody else can hold them; the start does not probe them first (RFC 6762
8.1, about a second), and a host that answers for them cannot stop a peer
from starting. The first announcement goes out before the peer's first
datagram, so the others learn its nick no later than they hear it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .harness import ROOT
from .test_headless import _introduced

pytestmark = pytest.mark.slow

SQUATTER = """
import asyncio, sys
from chat_app.crypto import Identity
from chat_app.net.discovery import SERVICE_TYPE
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

async def main():
    victim, address = sys.argv[1], sys.argv[2]
    key = Identity.generate().public_key  # a key of its own: it cannot be the victim
    zc = AsyncZeroconf(ip_version=IPVersion.V4Only)
    info = AsyncServiceInfo(SERVICE_TYPE, f"{victim}.{SERVICE_TYPE}", parsed_addresses=[address], port=4000,
                            server=f"{victim}.local.", properties={"id": victim, "key": key.hex(), "nick": "mallory"})
    await zc.async_register_service(info, cooperating_responders=True)  # it answers for the name from now
    print("squatting", flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def test_a_host_answering_for_our_name_cannot_stop_us_starting(spawn, lan):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.stop()
    mallory = lan.host("mallory")
    squatter = subprocess.Popen([*mallory.prefix(), sys.executable, "-c", SQUATTER, alice.peer_id, mallory.address],
                                cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout.readline().strip() == "squatting"
        alice.start()  # waits for her ready line: a probe of her name would have met mallory's answer
        alice.send("back despite mallory")
        # delivered, under her nick, whatever mallory's records did to bob's view of her announcement
        assert [(e["text"], e["nick"]) for e in bob.wait_delivered(1)] == [("back despite mallory", "alice")]
    finally:
        squatter.kill()
        squatter.wait()


def test_the_others_learn_a_new_peers_nick_no_later_than_they_hear_it(spawn):
    alice = spawn("alice")
    for nick in ("bob", "carol"):
        newcomer = spawn(nick)
        first = alice.wait_for(lambda e, p=newcomer: e["event"] == "peer_joined" and e["peer_id"] == p.peer_id)
        assert (first["nick"], "mdns" in first["found"]) == (nick, True), first
