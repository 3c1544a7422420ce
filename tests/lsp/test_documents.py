"""Open buffers over disk: tools see unsaved text."""

from agent_lsp.tools.text import line_content, line_starts
from agent_lsp.workspace.documents import Documents, apply_change


def test_open_buffer_wins_over_disk_and_close_falls_back(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("on disk\n", encoding="utf-8")
    docs = Documents()
    assert docs.read(path).text == "on disk\n" and docs.read(path).version is None
    docs.open(path, "in buffer\n", 3)
    assert docs.read(path).text == "in buffer\n" and docs.read(path).version == 3
    assert docs.paths() == [path.resolve()]
    docs.close(path)
    assert docs.get(path) is None and docs.read(path).text == "on disk\n"


def test_incremental_changes_in_code_points(tmp_path):
    docs = Documents()
    path = tmp_path / "b.txt"
    docs.open(path, "héllo\r\nwörld\n", 1)
    docs.change(path, 2, [(((1, 1), (1, 2)), "o"), (((0, 0), (0, 0)), ">> ")])
    snapshot = docs.get(path)
    assert snapshot.text == ">> héllo\r\nworld\n" and snapshot.version == 2
    docs.change(path, 3, [(None, "new")])
    assert docs.get(path).text == "new"


def test_positions_past_the_line_end_clamp():
    assert apply_change("ab\ncd", (0, 99), (0, 99), "!") == "ab!\ncd"
    assert apply_change("ab\ncd", (9, 0), (9, 0), "!") == "ab\ncd!"
    text = "a\r\nb\rc"
    assert [line_content(text, line_starts(text), line) for line in range(4)] == ["a", "b", "c", ""]
