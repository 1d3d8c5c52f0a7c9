"""Which channels open only with their key, and which are kept without it.

A private channel is joined with a passphrase; its key is derived then. The
store remembers the channel's tag, so that the channel is never opened in
the clear, and the data directory keeps the derived secret in a file of mode
0600 (``chat_app.store.channel_keys``, beside the identity key), so that a
restart rejoins it without the passphrase; ``/part`` forgets the secret. With
neither the file nor the passphrase the channel stays closed.

A ``~<tag>`` channel is one this peer keeps
blind (``BlindStore``): its datagrams are kept and served, never opened. The
store remembers its tag too, so a store peer restarted without ``--channel
~<tag>`` still announces and serves it (the mailbox is no channel: a role
taken with ``serve --mailbox`` at each start).
Others see a private channel only by its tag: in announcements and on
replication links it goes by its link name (``Envelopes.link_name``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from chat_app.channel_names import SVS_MARK, channel_spec
from chat_app.crypto import ChannelKey, KeyFileError, Kind, VerifyBudget, channel_tag_of, derive_channel_key
from chat_app.crypto.channel import Reach, proof
from chat_app.address import Address
from chat_app.runtime.blind import BlindStore
from chat_app.runtime.catchup import replicated_as
from chat_app.runtime.envelopes import Envelopes
from chat_app.runtime.mailbox import MAILBOX_TAG
from chat_app.store import Store
from chat_app.store.channel_keys import ChannelKeys

MIN_PASSPHRASE = 12
"""Characters of the passphrase a new private channel is made with: whoever
captures its datagrams can try passphrases offline (scrypt slows each try),
and a short one is most often a name typed with a space (``/join #bad name!``)."""


ANSWER_RATE, ANSWER_BURST = 1, 2
"""Proofs sent one address a second (``ANSWER_BURST`` at once): a member is no reflector either."""


class PrivateChannels:
    def __init__(self, store: Store, envelopes: Envelopes, passphrases: Mapping[str, str] | None,
                 error: Callable[[str], None]) -> None:
        self.store = store
        self.envelopes = envelopes
        # private channels to join at start (keys derived there); a name may carry the SVS mark
        self.passphrases = {c.removesuffix(SVS_MARK): p for c, p in (passphrases or {}).items()}
        self._specs = tuple(passphrases or ())  # as given, with the mark
        self.blind = BlindStore(store, store.blind.tags())  # private channels kept without their key (``~tag``)
        self._error = error  # reports a refusal to the user
        self._keys = ChannelKeys(Path(store.path).parent)
        self._secrets: dict[str, bytes] = {}  # channel -> its secret, as the file holds them
        self._answers = VerifyBudget(rate=ANSWER_RATE, burst=ANSWER_BURST, penalty=0, max_sources=1024)

    def opening(self, channels: Iterable[str]) -> list[tuple[str, str | None]]:
        """The channels to join at start, of ``channels`` and those with a
        passphrase, each with the protocol it asks for (see ``channel_spec``):
        private ones unlocked first - by their kept secret, else their
        passphrase - ``~tag`` ones kept blind instead. A channel that stays
        closed is reported once: here if it is not joined yet, else when the
        stored ones are opened (``may_open``)."""
        self._restore()
        for channel, passphrase in self.passphrases.items():
            self.unlock(channel, passphrase)
        joining, joined = [], set(self.store.joined_channels())
        for spec in dict.fromkeys([*channels, *self._specs]):
            if spec.startswith("~"):
                self.keep_blind(spec)
            elif self.may_open((opening := channel_spec(spec))[0], report=opening[0] not in joined):
                joining.append(opening)
        return joining

    def _restore(self) -> None:
        """Rejoin the private channels whose secrets the data directory keeps."""
        try:
            self._secrets = self._keys.load()
        except KeyFileError as exc:
            return self._error(str(exc))
        for channel, secret in self._secrets.items():
            key = ChannelKey(channel, secret)
            if self.store.keys.private_tag(channel) == key.tag:
                self.envelopes.keep_private(channel, key)

    def unlock(self, channel: str, passphrase: str) -> bool:
        """Derive a private channel's key, remember that the channel is
        private (its tag, in the store) and keep its secret (in the data
        directory); False, with the reason, if the channel here is not that one."""
        known = self.store.keys.private_tag(channel)
        if known is None and len(passphrase) < MIN_PASSPHRASE:
            return self._error(f"#{channel} would be a new private channel, and its passphrase is shorter than "
                               f"{MIN_PASSPHRASE} characters: refused (a channel name has no spaces; what "
                               f"follows it is the passphrase)") or False
        return self.accept(channel, derive_channel_key(channel, passphrase, self.envelopes.gate.keyring.params))

    def accept(self, channel: str, secret: bytes) -> bool:
        """Open a private channel with its ``secret`` (derived from its
        passphrase, or handed over in an invitation); as ``unlock``."""
        known = self.store.keys.private_tag(channel)
        key = ChannelKey(channel, secret)
        if known is None and self.store.count(channel) == 0:
            self.store.keys.set_private_tag(channel, key.tag)
        elif known is None:
            return self._error(f"#{channel} here is a public channel with history: a private one of that name "
                               f"would mix with it; use another name") or False
        elif known != key.tag:
            return self._error(f"wrong passphrase for #{channel}: it was joined here with another one") or False
        self.envelopes.keep_private(channel, key)
        self._secrets[channel] = secret
        self._keys.save(self._secrets)
        return True

    def secret(self, channel: str) -> bytes | None:
        """The secret of a private channel we are in (what an invitation hands over)."""
        return self._secrets.get(channel) if channel in self.envelopes.private else None

    def forget(self, channel: str) -> None:
        """``/part``: the secret goes; coming back takes the passphrase again."""
        self.envelopes.leave_private(channel)
        if self._secrets.pop(channel, None) is not None:
            self._keys.save(self._secrets)

    def keep_blind(self, link_name: str) -> None:
        try:
            tag = bytes.fromhex(link_name[1:])
        except ValueError:
            tag = b""
        if len(tag) != 16:
            self._error(f"{link_name}: a blind channel is ~ and a 32-digit hex tag")
        else:
            self.blind.tags.add(tag)
            if tag != MAILBOX_TAG:
                self.store.blind.remember(tag)

    def may_open(self, channel: str, report: bool = True) -> bool:
        """A channel joined as private opens only with its key: never in the clear.
        The reason is reported unless ``report`` is False or a passphrase given
        for it failed (which said why)."""
        if self.store.keys.private_tag(channel) is not None and channel not in self.envelopes.private:
            if report and channel not in self.passphrases:
                self._error(f"#{channel} is private: join it with its passphrase (/join #{channel} <passphrase>)")
            return False
        return True

    def blind_tag(self, data: bytes) -> bytes | None:
        """The tag of the channel kept blind (unopened) that ``data`` belongs to; None if it is no such datagram."""
        if self.blind.tags and self.blind.keeps(tag := channel_tag_of(data),
                                                {k.tag for k in self.envelopes.private.values()}):
            return tag
        return None

    def reached(self, reach: Reach, addr: Address, now: int,
                letters: bytes) -> tuple[str, list[tuple[bytes, Address]]]:
        """A blind store's challenge or a member's proof: what to count, and
        what to send. A challenge under a tag we hold - a channel's, or
        ``letters``, where a mailbox files ours - is answered with its proof,
        to ``addr`` alone and the same size (``blind_answered``); a proof is
        the blind store's to check."""
        kind, tag, cookie = reach
        if kind is Kind.PRIVATE_PROOF:
            return self.blind.proved(tag, cookie, addr, now), []
        if tag != letters and self.envelopes.gate.keyring.by_tag(tag) is None:
            return "blind_challenge_not_ours", []
        if not self._answers.spend(addr, now):
            return "blind_answer_over_budget", []
        return "blind_answered", [(proof(tag, cookie), addr)]

    def link_names(self, channels: Iterable[str]) -> tuple[str, ...]:
        """``channels`` (and the blind ones) as others may see them: a private one by its tag only."""
        return (*(self.envelopes.link_name(c) for c in channels),
                *(self.blind.link_name(t) for t in sorted(self.blind.tags)))

    def replicated(self, channels: Iterable[str]) -> tuple[str, ...]:
        """What replication links are offered: ``channels`` by name, a private
        one by its datagram set only (its logs would show who wrote how much),
        and the datagram sets kept blind."""
        return (*(replicated_as(self.envelopes, c) for c in channels), *self.blind.replicated())

    def names(self, link_names: tuple[str, ...]) -> tuple[str, ...]:
        """Announced channels as the user knows them: a private one's tag becomes its name if it is ours."""
        return tuple(self.envelopes.channel_of(c) or c for c in link_names)

    def announced(self, link_names: tuple[str, ...], address: Address, now: int) -> None:
        """A peer announced these channels: serve it the blind ones we keep (and a mailbox, its letters)."""
        for tag in self.blind.announced(link_names):
            self.blind.serve(tag, address, now)
