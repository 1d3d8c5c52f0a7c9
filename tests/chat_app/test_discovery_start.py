"""Starting discovery does not wait for our mDNS name to be probed.

Zeroconf stands in here as a small fake whose registration probes until the
test says the probe is over, so the order of things is checked without a
network: start returns and the browser runs while the probe is pending, an
update waits for the registration, and stopping during the probe cancels it
and says no goodbye for a name never announced. (Discovery on real processes
runs on the test LAN: tests/e2e/test_lan.py.)
"""

from __future__ import annotations

import asyncio

import pytest

import chat_app.net.discovery as discovery
from chat_app.crypto import Identity
from chat_app.net.discovery import Discovery, PeerInfo
from zeroconf import NonUniqueNameException

BOUND_S = 1.0
"""Far longer than any step here takes without a network."""


class FakeZeroconf:
    """Records what discovery asks of zeroconf; registering probes until ``probed`` is set."""

    made: list[FakeZeroconf] = []

    def __init__(self, **kwargs) -> None:
        self.zeroconf = object()
        self.probed = asyncio.Event()
        self.name_taken = False
        self.calls: list[tuple[str, ...]] = []
        FakeZeroconf.made.append(self)

    async def async_register_service(self, info):
        self.calls.append(("probe",))
        await self.probed.wait()
        if self.name_taken:
            raise NonUniqueNameException
        self.calls.append(("register", _nick(info)))
        return _sent()

    async def async_update_service(self, info):
        self.calls.append(("update", _nick(info)))
        return _sent()

    async def async_unregister_service(self, info):
        self.calls.append(("unregister", _nick(info)))
        return _sent()

    async def async_close(self) -> None:
        self.calls.append(("close",))


class FakeBrowser:
    made: list[FakeBrowser] = []

    def __init__(self, zeroconf, service_type: str, handlers) -> None:
        self.browsing = True
        FakeBrowser.made.append(self)

    async def async_cancel(self) -> None:
        self.browsing = False


def _nick(info) -> str:
    return info.properties[b"nick"].decode()


def _sent() -> asyncio.Future:
    """The announcement zeroconf would keep repeating, already over."""
    sent = asyncio.get_running_loop().create_future()
    sent.set_result(None)
    return sent


@pytest.fixture
def fakes(monkeypatch):
    FakeZeroconf.made.clear()
    FakeBrowser.made.clear()
    monkeypatch.setattr(discovery, "AsyncZeroconf", FakeZeroconf)
    monkeypatch.setattr(discovery, "AsyncServiceBrowser", FakeBrowser)


def _discovery() -> Discovery:
    identity = Identity.generate()
    me = PeerInfo(identity.sender_id, "ann", ("10.0.0.1",), 7000, ("general",), identity.public_key)
    return Discovery(me, lambda peer: None, lambda peer_id: None)


async def _started() -> tuple[Discovery, FakeZeroconf]:
    """Discovery started, its probe under way."""
    found = _discovery()
    await asyncio.wait_for(found.start(), BOUND_S)  # before: waited for the probe, which never ends here
    await asyncio.sleep(0)
    [zc] = FakeZeroconf.made
    assert zc.calls == [("probe",)]
    return found, zc


def _only_this_task_left() -> bool:
    return asyncio.all_tasks() == {asyncio.current_task()}


def test_start_browses_while_our_name_is_probed(fakes):
    async def run():
        found, zc = await _started()
        [browser] = FakeBrowser.made
        assert browser.browsing
        zc.probed.set()
        await asyncio.sleep(0)
        assert zc.calls == [("probe",), ("register", "ann")]
        await found.stop()
        assert zc.calls[-2:] == [("unregister", "ann"), ("close",)] and not browser.browsing

    asyncio.run(run())


def test_an_update_waits_for_the_registration(fakes):
    async def run():
        found, zc = await _started()
        update = asyncio.ensure_future(found.update("bob", ("general", "random")))
        await asyncio.sleep(0.05)
        assert not update.done() and zc.calls == [("probe",)]
        zc.probed.set()
        await asyncio.wait_for(update, BOUND_S)
        assert zc.calls == [("probe",), ("register", "ann"), ("update", "bob")]
        await found.stop()
        assert zc.calls[-2:] == [("unregister", "bob"), ("close",)]

    asyncio.run(run())


def test_stopping_during_the_probe_cancels_it_and_says_no_goodbye(fakes):
    async def run():
        found, zc = await _started()
        await asyncio.wait_for(found.stop(), BOUND_S)
        assert zc.calls == [("probe",), ("close",)]
        assert _only_this_task_left()  # nothing left pending for asyncio to complain about at exit
        await found.update("bob", ("general",))  # after stopping: nothing to announce
        assert zc.calls == [("probe",), ("close",)]

    asyncio.run(run())


def test_a_name_another_host_answers_for_is_not_announced_and_we_stay_up(fakes):
    async def run():
        found, zc = await _started()
        zc.name_taken = True
        zc.probed.set()
        await asyncio.wait_for(found.update("bob", ("general",)), BOUND_S)
        assert found.stats["name_taken"] == 1
        await found.stop()
        assert zc.calls == [("probe",), ("close",)]
        assert _only_this_task_left()

    asyncio.run(run())
