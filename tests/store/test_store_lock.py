"""The per-session lock between processes (agent_lsp.store.lock)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agent_lsp.store import SessionLockedError, SessionStore

HOLDER = textwrap.dedent("""
    import sys
    from agent_lsp.store import SessionStore
    store = SessionStore(sys.argv[1], lock=True)
    session = store.load(sys.argv[2])
    print("held", flush=True)
    sys.stdin.readline()
    session.close()
    print("released", flush=True)
    sys.stdin.readline()
""")


@pytest.mark.skipif(sys.platform == "win32", reason="flock semantics; Windows uses msvcrt.locking")
def test_another_process_holding_a_session_is_named_and_its_exit_frees_it(tmp_path):
    store = SessionStore(tmp_path, lock=True)
    session = store.create(title="t")
    sid = session.id
    session.close()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), sid],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(SessionLockedError) as caught:
            store.load(sid)
        assert caught.value.pid == holder.pid and str(holder.pid) in str(caught.value)
        with pytest.raises(SessionLockedError):
            store.delete(sid)
        assert store.holder_of(sid) == holder.pid
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"  # closed: free again
        again = store.load(sid)
        again.close()
    finally:
        holder.kill()
        holder.wait()
    # a holder that dies without closing frees the session too (the kernel drops the lock)
    crasher = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), sid],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert crasher.stdout.readline().strip() == "held"
        assert store.holder_of(sid) == crasher.pid
    finally:
        crasher.kill()
        crasher.wait()
    assert store.holder_of(sid) is None
    assert store.delete(sid)


def test_one_process_may_open_a_session_twice_and_unlocked_stores_never_lock(tmp_path):
    store = SessionStore(tmp_path, lock=True)
    session = store.create()
    other = SessionStore(tmp_path, lock=True)  # e.g. a second host on the same directory
    twin = other.load(session.id)
    twin.close()
    assert store.holder_of(session.id) is not None  # the first still holds it
    session.close()
    assert store.holder_of(session.id) is None
    plain = SessionStore(tmp_path)
    plain.load(session.id)
    assert not store.lock_path_of(session.id).exists() or store.holder_of(session.id) is None
