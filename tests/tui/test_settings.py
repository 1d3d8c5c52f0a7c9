"""The settings file: what is written reads back with tomllib, hand edits
are honoured, and a bad file is refused with a one-line reason."""

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chat_app.tui.settings import Settings, SettingsError

from .conftest import until

words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@given(nick=st.none() | words, highlight=st.lists(words, max_size=4), typing=st.booleans(),
       last=st.none() | words)
def test_what_is_saved_reads_back(tmp_path_factory, nick, highlight, typing, last):
    data = tmp_path_factory.mktemp("data")
    saved = Settings(nick=nick, highlight=highlight, typing=typing, last_channel=last)
    saved.save(data)
    assert Settings.load(data) == saved
    assert tomllib.loads(Settings.path(data).read_text())["typing"] is typing


def test_no_file_gives_the_defaults(tmp_path):
    assert Settings.load(tmp_path) == Settings()


def test_a_hand_edited_file(tmp_path):
    Settings.path(tmp_path).write_text('# mine\ntheme = "nord"\nhighlight = ["lunch"]\nbell = false\n')
    settings = Settings.load(tmp_path)
    assert (settings.theme, settings.highlight, settings.bell, settings.typing) == ("nord", ["lunch"], False, True)


@pytest.mark.parametrize("text, reason", [
    ("theme = nord\n", "settings.toml"),
    ("bell = \"yes\"\n", "bell should be true or false"),
    ("highlight = \"lunch\"\n", "highlight should be a list of strings"),
])
def test_a_bad_file_is_refused_in_one_line(tmp_path, text, reason):
    Settings.path(tmp_path).write_text(text)
    with pytest.raises(SettingsError) as raised:
        Settings.load(tmp_path)
    assert reason in str(raised.value) and "\n" not in str(raised.value)


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


@pytest.mark.asyncio
async def test_the_client_reopens_on_the_channel_and_theme_last_used(make_app):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=(110, 24)) as pilot:
        await until(pilot, lambda: started(app))
        assert app.chat.state.current == "general"
        app.chat.switch_to("random")
        await pilot.press("f2")
        theme = app.theme
    again = make_app(channels=("general", "random"))
    async with again.run_test(size=(110, 24)) as pilot:
        await until(pilot, lambda: started(again))
        assert again.chat.state.current == "random" and again.theme == theme != "textual-dark"


@pytest.mark.asyncio
async def test_highlight_words_ring_and_ask_for_a_desktop_notification(make_app, bob_for, tmp_path, monkeypatch):
    monkeypatch.delenv("VTE_VERSION", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    Settings(highlight=["lunch"]).save(tmp_path / "alice")
    app = make_app()
    rang, written = [], []
    app.bell = lambda: rang.append(True)
    async with app.run_test(size=(110, 24)) as pilot:
        await until(pilot, lambda: started(app))
        app._driver.write = written.append
        bob = bob_for(app)
        bob.say("nothing for you")
        bob.say("Lunch; anyone?")
        await until(pilot, lambda: len(app.chat.state.channels["general"]) == 2)
        await pilot.pause(0.1)
        assert rang == [True]
        assert [w for w in written if w.startswith("\x1b]")] == ["\x1b]9;#general: bob: Lunch  anyone?\x1b\\"]


def test_a_bad_settings_file_is_left_alone(tmp_path):
    from chat_app.tui.app import ChatApp

    Settings.path(tmp_path).write_text("theme = nord\n")
    app = ChatApp(lambda emit: None, tmp_path)
    assert "settings.toml" in app.settings_problem and app.settings == Settings()
    app.save_settings()
    assert Settings.path(tmp_path).read_text() == "theme = nord\n"


def test_the_nick_setting_is_used_when_no_nick_is_given(tmp_path):
    import subprocess
    import sys

    Settings(nick="from-settings").save(tmp_path)
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "--headless", "--no-discovery", "--bind", "127.0.0.1",
                          "--data-dir", str(tmp_path)], input="/quit\n", capture_output=True, text=True, timeout=60)
    assert '"nick":"from-settings"' in run.stdout, run.stderr
