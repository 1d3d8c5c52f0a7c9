"""Identity keys, signed envelopes and private channels: pure, no sockets, no clock.

The runtime puts this layer between the sockets and the engines with a few calls::

    gate = Gate(load_or_create_identity(data_dir))
    key = gate.join("ops", passphrase)                      # a private channel, once (~100 ms)
    data = gate.seal(Kind.SDS, wire)                        # sending in a public channel
    data = gate.seal(Kind.SDS, wire, channel=key)           # sending in a private channel
    try:
        opened = gate.open(data, source=address, now=now)   # verified, SDS sender checked
    except EnvelopeError as exc:                            # counted in gate.stats
        ...                                                 # a `rejected` event: exc is one line
    else:
        engine_for(opened.context, opened.kind).receive(opened.payload, now)

``opened.context`` is empty for a public datagram and the channel tag for a
private one: route by it. See ``envelope.py`` and ``channel.py`` for the wire
formats, ``gate.py`` for the flood budget.
"""

from .channel import ChannelKey, Keyring, blind_id, channel_tag_of, derive_channel_key, open_datagram
from .direct import direct_key, exchange_key_statement, read_exchange_key
from .envelope import EnvelopeError, Kind, KnownKeys, Opened, Signer, Unverified, check_sds, open_envelope, seal
from .gate import Gate, VerifyBudget
from .keys import Identity, KeyFileError, fingerprint, load_or_create_identity, sender_id_of
from .migration import Rekey, RekeyError, legacy_sender_id, migrate_identity, verify_rekey

__all__ = [
    "ChannelKey", "EnvelopeError", "Gate", "Identity", "KeyFileError", "Keyring", "Kind", "KnownKeys", "Opened",
    "Rekey", "RekeyError", "Signer", "Unverified", "VerifyBudget", "blind_id", "channel_tag_of", "check_sds",
    "derive_channel_key", "direct_key", "exchange_key_statement", "fingerprint", "legacy_sender_id",
    "load_or_create_identity", "migrate_identity",
    "open_datagram", "open_envelope", "read_exchange_key", "seal", "sender_id_of", "verify_rekey",
]
