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
       marker=st.booleans(), day=st.none() | st.just("Friday 20 November 2026"), gaps=st.integers(0, 2))
def test_the_quick_height_is_the_number_of_lines_drawn(text, width, marker, day, gaps):
    renderer = MessageRenderer("alice")
    row = MessageRow(1, "m", "s" * 32, "dave", text, gaps=gaps)
    height = renderer.height(row, width, marker, day)
    assert height is None or height == len(renderer.render(row, width, marker, day, None))
