"""Drawing one message: links, and the quick height measure agreeing with
the wrapped lines."""

from hypothesis import given
from hypothesis import strategies as st

from chat_app.tui.model import MessageRow
from chat_app.tui.widgets.message_lines import MessageRenderer


def links(strips) -> set[str]:
    return {seg.style.link for strip in strips for seg in strip if seg.style and seg.style.link}


def test_urls_are_hyperlinks_and_are_not_split_across_lines():
    url = "https://example.org/a/long/path?with=query&and=more"
    row = MessageRow(1, "m", "s" * 32, "dave", f"see {'word ' * 8}{url}, it is good")
    strips = MessageRenderer().render(row, 80, marker=False, day=None, hit=None)
    assert links(strips) == {url}  # the trailing comma is not part of it
    assert len(strips) > 1 and any(url in strip.text for strip in strips)


@given(text=st.text(st.sampled_from("ab 名-\n"), max_size=120), width=st.integers(30, 120),
       marker=st.booleans(), day=st.none() | st.just("Friday 20 November 2026"), gaps=st.integers(0, 2),
       kind=st.sampled_from(["text", "me", "topic", "join", "nick"]))
def test_the_quick_height_is_the_number_of_lines_drawn(text, width, marker, day, gaps, kind):
    renderer = MessageRenderer("alice")
    row = MessageRow(1, "m", "s" * 32, "dave", text, kind, gaps=gaps)
    height = renderer.height(row, width, marker, day)
    assert height is None or height == len(renderer.render(row, width, marker, day, None))


def test_a_topic_reads_as_who_set_it_to_what_with_its_links():
    url = "https://example.org/plan"
    row = MessageRow(1, "m", "s" * 32, "bob", f"release on Friday, see {url}", "topic")
    strips = MessageRenderer().render(row, 100, marker=False, day=None, hit=None)
    assert strips[0].text.split("│ ", 1)[1].rstrip() == f"bob set the topic: release on Friday, see {url}"
    assert strips[0].text.split("│", 1)[0].rstrip().endswith("--")  # no nick in the nick column
    assert links(strips) == {url}
    linked = "".join(seg.text for seg in strips[0] if seg.style and seg.style.link)
    assert linked == url  # the link covers the URL, not text shifted by the lead-in


def test_the_delivery_mark_is_never_split_from_its_count():
    """Wrapping at a word boundary would leave "●" at the end of one line and
    "1" alone on the next; the mark goes whole after the text, or on a line
    of its own when it does not fit beside the text's last line."""
    renderer = MessageRenderer("ana")
    text = "set the topic: plans for the weekend, and a rather long topic line that will not fit at eighty columns"
    for width in range(30, 100):
        row = MessageRow(1, "m", "s" * 32, "ana", text, own=True, ack="acknowledged", peers=1)
        lines = [strip.text.split("│ ", 1)[1].rstrip() for strip in renderer.render(row, width, False, None, None)]
        assert lines[-1].endswith("● 1"), (width, lines)
        assert not any(line.endswith("●") or line == "1" for line in lines), (width, lines)
        height = renderer.height(row, width, False, None)
        assert height is None or height == len(lines)
