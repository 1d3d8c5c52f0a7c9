"""The client's file lines: an offer says what to type, a download's bar is one
line redrawn in place, a hostile name is shown inert."""

from chat_app import events as ev
from chat_app.files.events import FileOffered, FileProgress, FileReceived
from chat_app.file_offer import FileOffer
from chat_app.tui.reducer import reduce
from chat_app.tui.state import ClientState

NOW = 1_700_000_000_000


def _state() -> ClientState:
    state = ClientState()
    reduce(state, ev.Ready("a" * 16, "alice", 4000, (), ("general",)), NOW)
    return state


def _texts(state: ClientState) -> list[str]:
    return [row.text for row in state.channels["general"].entries]


def test_an_offer_progress_and_saving_read_as_lines_of_the_channel():
    state = _state()
    reduce(state, FileOffered(3, "general", "bob", "\x1b]0;pwned\x07notes.txt", 2_000_000, "text/plain", "0" * 64,
                              False, False), NOW)
    for done in (500_000, 1_000_000, 2_000_000):
        reduce(state, FileProgress(3, "general", "notes.txt", done, 2_000_000, 4_000_000), NOW + done // 1000)
    reduce(state, FileReceived(3, "general", "notes.txt", "/dl/notes.txt", 2_000_000, "0" * 64), NOW + 3000)
    texts = _texts(state)
    assert len(texts) == 3, texts  # the offer, one progress line, the saving
    assert "/accept 3" in texts[0] and "\x1b" not in texts[0] and "\x07" not in texts[0]
    assert texts[1].startswith("[" + "#" * 20 + "] 100% notes.txt") and "4.0 MB/s" in texts[1]
    assert "saved as /dl/notes.txt" in texts[2]


def test_a_file_message_reads_as_its_name_and_size_not_its_facts():
    offer = FileOffer("photo.jpg", 3_500_000, 262144, "1" * 64, "2" * 64, "image/jpeg")
    state = _state()
    reduce(state, ev.MessageDelivered("general", 1, "f" * 32, "b" * 16, NOW, "bob", "file", offer.text, 1, False,
                                      offer=offer), NOW)
    assert _texts(state)[-1] == "[file] photo.jpg (3.5 MB, image/jpeg)"
