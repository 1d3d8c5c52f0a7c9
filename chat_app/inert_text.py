"""Text from the network made inert before it meets a terminal or a page.

Whatever a peer sends - a message, a nick, a topic, an away reason, a name
in an mDNS record - is data. Written to a terminal as it is, ``ESC ] 0 ;``
retitles the window, ``ESC [ 2 J`` blanks the screen, a carriage return or a
backspace draws over what came before, and a right-to-left override shows
the rest of the line backwards. ``inert`` turns any string into one that can
do none of that, whatever the wire rule (``chat_app.payload``) let through:
rows stored before that rule existed are shown through it too.

- C0 controls and DEL become their Unicode Control Pictures (ESC: ``␛``,
  CR: ``␍``, BEL: ``␇``). A picture takes one cell, as the character it
  stands for would have taken a place in the text, and it cannot be
  mistaken for something the sender typed, as caret notation (``^[``,
  two ordinary characters) can. C1 controls (U+0080-U+009F), which have no
  pictures, and lone surrogates, which no terminal encoding takes, become
  U+FFFD, the mark for "a character that could not be shown".
- A newline is kept where the text is shown on several lines (``lines=True``:
  the history), and pictured (``␊``) where it is shown on one; the line and
  paragraph separators U+2028/U+2029 count as newlines. A tab becomes
  spaces, to the next stop of ``TAB``.
- Format characters (Unicode category Cf) are removed: the bidirectional
  embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) that
  reorder what follows them, the marks U+200E, U+200F and U+061C, the zero
  width space and joiners, the word joiner and invisible operators, the
  byte order mark, soft hyphens, tags. They are invisible by design, so
  showing them would put placeholders in every right-to-left message that
  uses them; right-to-left text keeps its letters, in the order the
  terminal gives them. One exception: a zero width joiner between two
  emoji (``👩‍💻``: woman, ZWJ, laptop; after a skin tone or VS16 too) is
  kept, so joined emoji stay one picture.

The common case - printable text - is one ``str.isprintable`` scan and the
same string back (a quarter of a microsecond for a chat line, where the
regular expression, whose class reaches beyond the BMP, takes seven times
longer).
"""

from __future__ import annotations

import re
import unicodedata

TAB = 4
"""Columns between tab stops."""

ZWJ = "\u200d"
VS16 = "\ufe0f"  # "show the emoji form of the character before"
REPLACEMENT = "\ufffd"

_TREATED = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0 controls, DEL, C1 controls
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates
    # every format character (category Cf; tests pin this list against unicodedata)
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_PICTURES = {chr(code): chr(0x2400 + code) for code in range(0x20)} | {"\x7f": "\u2421"}
_NEWLINES = ("\n", "\u2028", "\u2029")


def inert(text: str, *, lines: bool = False) -> str:
    """``text`` as it may be shown: nothing in it moves the cursor, changes
    a colour or a title, or hides or reorders what follows. ``lines``: the
    text is shown on several lines, so newlines stay newlines."""
    if text.isprintable() or _TREATED.search(text) is None:  # nothing of "Other" or "Separator" but a space
        return text
    if "\t" in text:
        text = text.expandtabs(TAB)
    return _TREATED.sub(lambda found: _shown(found, lines), text)


def _shown(found: re.Match[str], lines: bool) -> str:
    char = found.group()
    if char in _NEWLINES:
        return "\n" if lines else _PICTURES["\n"]
    if char in _PICTURES:
        return _PICTURES[char]
    if char <= "\x9f" or "\ud800" <= char <= "\udfff":  # C1 controls, surrogates
        return REPLACEMENT
    if char == ZWJ and _joins_emoji(found.string, found.start()):
        return ZWJ
    return ""


def _joins_emoji(text: str, at: int) -> bool:
    """Is the joiner at ``at`` between two emoji, as in an emoji ZWJ sequence?"""
    if at == 0 or at + 1 >= len(text):
        return False
    before, after = text[at - 1], text[at + 1]
    return (before == VS16 or unicodedata.category(before) in ("So", "Sk")) and unicodedata.category(after) == "So"
