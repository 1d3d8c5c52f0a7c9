"""Identity keys on disk, derived ids, and the move from the legacy secret."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import stat

import pytest

from chat_app.crypto import (
    Identity, KeyFileError, Kind, KnownKeys, RekeyError, fingerprint, load_or_create_identity,
    migrate_identity, open_envelope, seal, sender_id_of, verify_rekey,
)
from chat_app.crypto.keys import KEY_FILE
from chat_app.identity import new_secret, peer_id

from .helpers import identity


def test_first_use_creates_an_owner_only_key_file_and_reuses_it(tmp_path):
    old_umask = os.umask(0)  # even a careless umask must not widen the file's mode
    try:
        first = load_or_create_identity(tmp_path)
    finally:
        os.umask(old_umask)
    mode = stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode)
    assert mode == 0o600
    again = load_or_create_identity(tmp_path)
    assert again.public_key == first.public_key
    assert again.exchange_public_key == first.exchange_public_key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no temporary file left behind


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_key_file_others_can_read_is_refused_in_one_line(tmp_path, mode):
    load_or_create_identity(tmp_path)
    os.chmod(tmp_path / KEY_FILE, mode)
    with pytest.raises(KeyFileError) as err:
        load_or_create_identity(tmp_path)
    message = str(err.value)
    assert "\n" not in message
    assert f"{mode:04o}" in message and "chmod 600" in message


def test_a_damaged_key_file_is_refused_not_replaced(tmp_path):
    load_or_create_identity(tmp_path)
    path = tmp_path / KEY_FILE
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(KeyFileError, match="not an sds-chat identity key file"):
        load_or_create_identity(tmp_path)
    assert len(path.read_bytes()) == 71  # left for its owner to look at


def _public_key_of(data_dir: str) -> bytes:
    return load_or_create_identity(data_dir).public_key


def test_processes_starting_at_once_agree_on_one_key(tmp_path):
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        keys = pool.map(_public_key_of, [tmp_path] * 8)
    assert len(set(keys)) == 1
    assert load_or_create_identity(tmp_path).public_key == keys[0]


def test_sender_id_is_the_hash_of_the_public_key():
    me = identity("alice")
    assert me.sender_id == hashlib.sha256(me.public_key).hexdigest()[:32]
    assert re.fullmatch(r"[0-9a-f]{32}", me.sender_id)
    assert sender_id_of(identity("bob").public_key) != me.sender_id


def test_fingerprint_is_five_groups_of_four_and_differs_per_key():
    assert re.fullmatch(r"([0-9a-f]{4} ){4}[0-9a-f]{4}", fingerprint(identity("alice").public_key))
    assert fingerprint(identity("alice").public_key) != fingerprint(identity("bob").public_key)


def test_migration_links_the_legacy_id_to_the_new_key():
    secret, me = new_secret(), identity("alice")
    rekey = migrate_identity(secret, me)
    assert rekey.old_sender_id == peer_id(secret)  # the id old messages carry
    assert rekey.new_sender_id == me.sender_id
    opened = open_envelope(seal(me, Kind.REKEY, rekey.statement), KnownKeys())
    assert verify_rekey(opened.payload, opened.signer.public_key) == rekey


def test_a_rekey_statement_re_signed_by_someone_else_is_refused():
    rekey = migrate_identity(new_secret(), identity("alice"))
    opened = open_envelope(seal(identity("mallory"), Kind.REKEY, rekey.statement), KnownKeys())
    with pytest.raises(RekeyError, match="other than its signer"):
        verify_rekey(opened.payload, opened.signer.public_key)
    with pytest.raises(RekeyError, match="malformed"):
        verify_rekey(b"\xff\x00garbage", identity("alice").public_key)


def test_identity_round_trips_through_bytes():
    me = Identity.generate()
    back = Identity.from_bytes(me.to_bytes())
    assert (back.public_key, back.exchange_public_key) == (me.public_key, me.exchange_public_key)


def test_a_data_directory_that_cannot_be_written_says_so(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    with pytest.raises(KeyFileError, match=r"^cannot (open|create) .*: Not a directory$"):
        load_or_create_identity(blocker / "data")
