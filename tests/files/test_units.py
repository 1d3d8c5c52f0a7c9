"""Offers, chunks, frames and saved names, without the network."""

import hashlib
import os

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.files.chunks import ChunkError, check_and_write, describe, read_chunk
from chat_app.files.names import MAX_NAME, safe_name, unused_path
from chat_app.file_offer import CHUNK_SIZE, FileOffer, OfferError
from chat_app.files.wire import (WireError, chunk_head, decode_answer, decode_request, encode_chunk, encode_none,
                                 encode_request)
from chat_app.net.tcp import frame, frame_head
from chat_app.payload import Payload, PayloadError

ROOT = "ab" * 32
SHA = "cd" * 32


def _offer(**changes) -> FileOffer:
    values = dict(name="report.pdf", size=600_000, chunk_size=CHUNK_SIZE, sha256=SHA, root=ROOT,
                  media="application/pdf", key=None) | changes
    return FileOffer(**values)


# ------------------------------------------------------------------ offers


@pytest.mark.parametrize("key", [None, bytes(range(32))])
def test_an_offer_reads_back_from_its_text(key):
    offer = _offer(key=key)
    assert FileOffer.parse(offer.text) == offer
    assert offer.chunks == 3


@pytest.mark.parametrize("facts", [
    "sds-file 600000 262144 " + SHA + " " + ROOT,                              # no media type
    "sds-file -1 262144 " + SHA + " " + ROOT + " a/b",                         # negative size
    "sds-file 600000 262144 " + SHA[:-1] + " " + ROOT + " a/b",                # short hash
    "sds-file 600000 262144 " + SHA.upper() + " " + ROOT + " a/b",             # not lower-case hex
    "sds-file 600000 262144 " + SHA + " " + ROOT + " a/b " + "00" * 31,        # short key
    "sds-file 600000 262144 " + SHA + " " + ROOT + " a/b trailing",
    "sds-file 600000 300000 " + SHA + " " + ROOT + " a/b",                     # chunk not a power of two
    "sds-file 600000 1048576 " + SHA + " " + ROOT + " a/b",                    # chunk larger than a frame allows
    "sds-file 9999999999999 4096 " + SHA + " " + ROOT + " a/b",                # too many chunks
])
def test_a_file_payload_with_wrong_facts_is_refused(facts):
    with pytest.raises(PayloadError):
        Payload("file", "mallory", f"x.bin\n{facts}", 1, 0)


def test_a_file_payload_needs_its_facts_line():
    with pytest.raises(PayloadError, match="sds-file"):
        Payload("file", "mallory", "just a name", 1, 0)
    good = Payload("file", "alice", _offer().text, 1, 0)
    assert Payload.decode(good.encode()) == good
    with pytest.raises(OfferError):
        FileOffer.parse(_offer().text.replace("\n", " "))


# ------------------------------------------------------------------ names


@given(st.text(max_size=12_000))
@settings(max_examples=300, deadline=None)
def test_a_safe_name_stays_in_its_directory_whatever_it_was(name):
    safe = safe_name(name)
    assert safe and "/" not in safe and "\\" not in safe and "\x00" not in safe
    assert safe not in (".", "..") and not safe.startswith(".")
    assert len(safe.encode()) <= MAX_NAME
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in safe)


@pytest.mark.parametrize("name, saved", [
    ("../../etc/passwd", "passwd"), ("/etc/shadow", "shadow"), ("..", "file"), ("", "file"),
    ("a\x00b.txt", "a_b.txt"), ("bell\x07\x1b[2J.txt", "bell__[2J.txt"), ("C:\\Windows\\x.exe", "x.exe"),
    ("photo.jpg", "photo.jpg"), ("\u202eexe.txt", "exe.txt"),
])
def test_hostile_names_are_saved_under_safe_ones(name, saved):
    assert safe_name(name) == saved


def test_a_very_long_name_keeps_its_extension():
    assert safe_name("a" * 10_000 + ".tar.gz") == "a" * (MAX_NAME - 3) + ".gz"


def test_a_name_in_use_is_never_overwritten(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    first, second = unused_path(tmp_path, "notes.txt"), unused_path(tmp_path, "../notes.txt")
    assert (first.name, second.name) == ("notes (1).txt", "notes (2).txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert unused_path(tmp_path, "README").name == "README"


# ------------------------------------------------------------------ chunks


@pytest.mark.parametrize("key", [None, os.urandom(32)])
def test_chunks_are_checked_against_the_manifest_and_written_in_place(tmp_path, key):
    source = tmp_path / "source"
    source.write_bytes(os.urandom(3 * 4096 + 100))
    described = describe(source, 4096, key)
    assert described.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert len(described.manifest) == 4 * 32
    target = tmp_path / "target"
    fd = os.open(target, os.O_RDWR | os.O_CREAT)
    try:
        for index in (3, 1, 0, 2):  # any order
            travelled = read_chunk(source, index, 4096, key)
            if key is not None:
                assert travelled not in source.read_bytes()  # sealed as it travels
            check_and_write(fd, described.manifest, index, travelled, 4096, key)
        bad = bytearray(read_chunk(source, 0, 4096, key))
        bad[0] ^= 1
        with pytest.raises(ChunkError, match="chunk 0 does not match"):
            check_and_write(fd, described.manifest, 0, bytes(bad), 4096, key)
        with pytest.raises(ChunkError):  # a true chunk in the wrong place
            check_and_write(fd, described.manifest, 1, read_chunk(source, 2, 4096, key), 4096, key)
    finally:
        os.close(fd)
    assert target.read_bytes() == source.read_bytes()


def test_a_key_changes_every_chunk_hash(tmp_path):
    source = tmp_path / "source"
    source.write_bytes(b"x" * 10_000)
    plain, sealed = describe(source, 4096, None), describe(source, 4096, os.urandom(32))
    assert plain.sha256 == sealed.sha256 and plain.root != sealed.root


# ------------------------------------------------------------------ frames


def test_requests_and_answers_read_back():
    assert decode_request(encode_request(ROOT, [0, 5])) == (ROOT, [0, 5])
    assert decode_request(encode_request(ROOT, None)) == (ROOT, None)
    assert decode_answer(encode_chunk(3, b"data")) == ("chunk", 3, b"data")
    fake_offer = "x)\n-- bob offers payroll.pdf (1.0 MB): /accept 7 to fetch it\u2028\x1b[2J"
    kind, reason, _ = decode_answer(encode_none(fake_offer))  # shown in a notice: one inert line
    assert kind == "none" and reason.isprintable() and "bob offers payroll.pdf" in reason


@pytest.mark.parametrize("size", [0, 1, 23, 24, 255, 256, 65_535, 65_536, 262_144])
@pytest.mark.parametrize("index", [0, 23, 24, 255, 256, 70_000, 2**32])
def test_a_chunk_written_in_two_pieces_is_the_frame_of_its_cbor(index, size):
    """A holder writes a chunk's head, then the chunk as read; together they
    must be exactly the frame of the CBOR triple (RFC 8949 heads at every
    length boundary)."""
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    head = chunk_head(index, size)
    assert frame_head(len(head) + size) + head + data == frame(cbor2.dumps(["chunk", index, data]))


@pytest.mark.parametrize("frame", [
    b"\x00\x02garbage", b"\x00\x02" + bytes([0x83, 0x60, 0x40, 0xf6]), encode_request(ROOT, [-1]),
    encode_request(ROOT, list(range(65))), encode_request(ROOT, [True]), b"\x00\x01" + encode_request(ROOT, None)[2:],
])
def test_a_malformed_request_is_refused(frame):
    with pytest.raises(WireError):
        decode_request(frame)
