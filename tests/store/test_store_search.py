"""Searching a store's sessions by the text of their messages, through the
index file the searches keep up to date (never rebuilt by hand)."""

import sqlite3

from agent_lsp.store import SessionStore
from agent_lsp.store.search_index import INDEX_FILE


def message(role, text, **extra):
    if role == "user":
        return {"role": "user", "id": "m", "source": extra.pop("source", "user"),
                "content": [{"type": "text", "text": text}], **extra}
    return {"role": "assistant", "content": [{"type": "reasoning", "text": "thinking about zebras"},
                                             {"type": "text", "text": text}]}


def turn(session, user, answer=None, **extra):
    n = session.last_turn() + 1
    session.append("turn/start", {"turn": n})
    session.append("user/message", {"turn": n, "step": 1, "message": message("user", user, **extra), "surfaceOp": "append"})
    if answer is not None:
        session.append("assistant/message", {"turn": n, "step": 1, "message": message("assistant", answer),
                                             "surfaceOp": "append"})
    session.append("turn/end", {"turn": n, "reason": {"kind": "completed"}})
    session.flush()


def search(store, query):
    return store.search(query, store.list())


def test_query_matches_user_and_assistant_text_in_any_case_with_an_excerpt(tmp_path):
    store = SessionStore(tmp_path)
    a, b, c = store.create(), store.create(), store.create()
    turn(a, "Why does the tokenizer drop emoji?", "The Unicode ranges in lexer.py stop at U+FFFF.")
    turn(b, "Rename the config loader", "Done: it is load_settings now.")
    turn(c, "hello", "Hi! What shall we work on?")

    assert set(search(store, "unicode")) == {a.id}  # in the answer, not the title
    assert set(search(store, "TOKENIZER")) == {a.id}
    assert set(search(store, "config settings")) == {b.id}  # every word, in any of the messages
    assert search(store, "config emoji") == {}
    assert search(store, "zebras") == {}  # reasoning is not message text
    assert "Unicode ranges in lexer.py" in search(store, "lexer")[a.id]
    assert set(search(store, "wh")) == {a.id, c.id}  # words that start with it
    assert set(search(store, "lex")) == {a.id} and search(store, "exer") == {}
    assert set(search(store, "load_set")) == {b.id}


def test_new_messages_are_found_without_rebuilding_and_deleted_sessions_drop_out(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    turn(s, "first question")
    assert search(store, "flamingo") == {}
    turn(s, "now about the flamingo")
    assert set(search(store, "flamingo")) == {s.id}
    other = SessionStore(tmp_path)  # another process's store on the same folder shares the index file
    assert set(search(other, "flamingo")) == {s.id}
    store.delete(s.id)
    assert search(store, "flamingo") == {} and search(other, "flamingo") == {}


def test_a_missing_or_damaged_index_is_rebuilt_by_the_next_search(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    turn(s, "the pelican test")
    assert set(search(store, "pelican")) == {s.id}
    store.index.close()
    (tmp_path / INDEX_FILE).write_bytes(b"this is not a database" * 100)
    assert set(search(SessionStore(tmp_path), "pelican")) == {s.id}
    for leftover in tmp_path.glob(INDEX_FILE + "*"):
        leftover.unlink()
    assert set(search(SessionStore(tmp_path), "pelican")) == {s.id}
    with sqlite3.connect(tmp_path / INDEX_FILE) as db:  # a stale index: it missed what the file gained
        db.execute("DELETE FROM texts")
        db.execute("UPDATE files SET indexed = 0")
    assert set(search(SessionStore(tmp_path), "pelican")) == {s.id}


def test_context_blocks_and_loop_messages_are_not_searched_but_titles_are(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create(title="Quarterly report")
    turn(s, "look at this <context>\nSECRET_PLAN in notes.md\n</context>",
         context=[{"kind": "file", "uri": "file:///w/notes.md"}])
    turn(s, "summary of earlier work on walruses", source="compaction")
    assert search(store, "SECRET_PLAN") == {} and search(store, "walruses") == {}
    assert search(store, "quarterly") == {s.id: None}  # the title matched, no message did
    s.append("session/title", {"title": "Penguin migration notes", "source": "model"})
    s.flush()
    (listed,) = store.list()
    assert listed.title == "Penguin migration notes"  # the last title event names the session
    assert set(search(store, "penguin")) == {s.id}


def test_a_line_being_written_is_indexed_once_whole(tmp_path):
    store = SessionStore(tmp_path)
    s = store.create()
    turn(s, "walrus one")
    path = store.path_of(s.id)
    whole = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"seq":4,"time":1,"type":"user/message","data":{"message":{"role":"user","id":"x","source":"user",'
                b'"content":[{"type":"text","text":"narwhal"}]}}}')  # no newline yet
    assert search(store, "narwhal") == {}
    with open(path, "ab") as f:
        f.write(b"\n")
    assert set(search(store, "narwhal")) == {s.id}
    assert path.read_bytes().startswith(whole)
