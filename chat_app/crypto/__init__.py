"""Identity keys, signed envelopes and private channels: pure, no sockets, no clock.

The runtime puts this layer between the sockets and the engines::

    keys = KnownKeys()
    data = seal(identity, Kind.SDS, wire)                  # sending, public channel
    data = channel_key.seal(identity, Kind.SDS, wire)      # sending, private channel
    opened = open_datagram(data, keys, keyring)            # receiving: EnvelopeError or verified
    if opened.kind is Kind.SDS:
        check_sds(opened)                                  # the sender id is the signer's
        engine.receive(opened.payload, now)

See ``envelope.py`` and ``channel.py`` for the wire formats.
"""

from .channel import ChannelKey, Keyring, blind_id, channel_tag_of, derive_channel_key, open_datagram
from .envelope import EnvelopeError, Kind, KnownKeys, Opened, Signer, check_sds, open_envelope, seal
from .keys import Identity, KeyFileError, fingerprint, load_or_create_identity, sender_id_of
from .migration import Rekey, RekeyError, legacy_sender_id, migrate_identity, verify_rekey

__all__ = [
    "ChannelKey", "EnvelopeError", "Identity", "KeyFileError", "Keyring", "Kind", "KnownKeys", "Opened",
    "Rekey", "RekeyError", "Signer", "blind_id", "channel_tag_of", "check_sds", "derive_channel_key",
    "fingerprint", "legacy_sender_id", "load_or_create_identity", "migrate_identity", "open_datagram",
    "open_envelope", "seal", "sender_id_of", "verify_rekey",
]
