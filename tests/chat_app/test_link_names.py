"""Private channels, mailboxes and direct conversations named as the data
directory knows them, read from a real SQLite file."""

import subprocess
import sys

from chat_app.crypto import Identity
from chat_app.identity import load_identity
from chat_app.link_names import LinkNames
from chat_app.runtime.mailbox import MAILBOX_LINK, mailbox_tag
from chat_app.store import Store, database_path
from tests.chat_app.test_export import _history

SECRET_TAG, STRANGER_TAG = bytes(range(16)), bytes([7] * 16)


def data_dir_knowing_bob(path):
    """A peer's data directory: in the private #secret, holding bob's keys and a conversation with him."""
    bob = Identity.generate()
    store = Store(database_path(path))
    load_identity(store, path)
    store.keys.set_private_tag("secret", SECRET_TAG)
    store.direct.learn(bob.sender_id, bob.public_key, bob.exchange_public_key, "bob")
    _history(store, "general", 2)
    _history(store, f"@{bob.sender_id}", 2)
    store.close()
    return bob


def test_what_a_data_directory_knows_is_named_and_only_the_rest_is_hex(tmp_path):
    bob = data_dir_knowing_bob(tmp_path)
    carol = Identity.generate()
    names = LinkNames.of_data_dir(tmp_path)
    assert names.channel("general") == "#general"
    assert names.channel(f"~{SECRET_TAG.hex()}") == "#secret (private)"
    assert names.channel(f"~{mailbox_tag(bob.public_key).hex()}") == "mailbox of bob"
    assert names.channel(MAILBOX_LINK) == "mailbox store"
    assert names.channel(f"~{mailbox_tag(carol.public_key).hex()}", owner_key=carol.public_key) == "its mailbox"
    assert names.channel(f"~{STRANGER_TAG.hex()}") == f"#~{STRANGER_TAG.hex()}"  # not ours: only the tag is known
    assert names.conversation(f"@{bob.sender_id}") == "@bob"
    assert names.conversation(f"@{carol.sender_id}") == f"@{carol.sender_id[:12]}…"
    nothing = LinkNames.of_data_dir(tmp_path / "absent")
    assert nothing.channel(f"~{SECRET_TAG.hex()}") == f"#~{SECRET_TAG.hex()}"


def test_export_lists_a_direct_conversation_by_the_nick(tmp_path):
    bob = data_dir_knowing_bob(tmp_path)
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(tmp_path),
                          "--out", str(tmp_path / "x.jsonl"), "--channel", "nosuch"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr == "sds-chat: no history for #nosuch (channels with history: @bob, #general)\n"
    assert bob.sender_id[:8] not in run.stderr
