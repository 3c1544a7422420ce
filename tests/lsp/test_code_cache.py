"""The start-up code cache the server loads lsprotocol and its models with:
classes and annotations made from cached code behave as compiled ones, and a
broken or stale cache file is replaced, never trusted."""

from __future__ import annotations

import marshal

import attrs

from agent_lsp.lsp.code_cache import start_code_cache


def make_point():
    @attrs.define
    class Point:
        x: int
        y: int = 0

    return Point


def test_classes_built_from_the_cache_behave_as_compiled_ones(tmp_path):
    path = tmp_path / "code.marshal"
    with start_code_cache(path):
        compiled = make_point()
    assert path.exists()
    written = marshal.loads(path.read_bytes())
    with start_code_cache(path):
        cached = make_point()
    assert marshal.loads(path.read_bytes()).keys() == written.keys()  # all found: not rewritten
    assert all(isinstance(code, bytes) for code in written.values())  # each entry unmarshalled when asked for
    assert cached(1, 2) == cached(1, 2) != cached(2)
    assert repr(cached(3)) == repr(compiled(3)) == "Point(x=3, y=0)"
    assert cached.__init__.__annotations__ == compiled.__init__.__annotations__


def test_a_corrupt_cache_file_is_replaced(tmp_path):
    path = tmp_path / "code.marshal"
    path.write_bytes(b"not marshal data")
    with start_code_cache(path):
        point = make_point()
    assert point(1).y == 0
    assert all(isinstance(key, tuple) for key in marshal.loads(path.read_bytes()))


def test_entries_no_start_uses_are_dropped_and_an_earlier_format_is_replaced(tmp_path):
    """The earlier format held code objects, not their marshalled bytes."""
    path = tmp_path / "code.marshal"
    path.write_bytes(marshal.dumps({("x = 1", "<gone>", "exec"): compile("x = 1", "<gone>", "exec")}))
    with start_code_cache(path):
        make_point()
    written = marshal.loads(path.read_bytes())
    assert ("x = 1", "<gone>", "exec") not in written and written
    assert all(isinstance(code, bytes) for code in written.values())


def test_attrs_and_typing_compile_as_usual_outside_the_cache(tmp_path):
    import typing

    import attr._make

    with start_code_cache(tmp_path / "code.marshal"):
        assert "compile" in vars(attr._make) and "compile" in vars(typing)
    assert "compile" not in vars(attr._make) and "compile" not in vars(typing)


def test_forward_references_from_the_cache_resolve_as_compiled_ones(tmp_path):
    """A string annotation is compiled by typing; from the cache it names the
    same type, and a start with an annotation the file lacks adds it."""
    import typing

    path = tmp_path / "code.marshal"

    class Tree:
        pass

    with start_code_cache(path):
        compiled = typing.ForwardRef("list[Tree] | None")
    assert list(marshal.loads(path.read_bytes())) == [("list[Tree] | None", "<string>", "eval")]
    with start_code_cache(path):
        cached = typing.ForwardRef("list[Tree] | None")
        other = typing.ForwardRef("dict[str, Tree]")
    assert typing._eval_type(cached, {"Tree": Tree}, None) == typing._eval_type(compiled, {"Tree": Tree}, None) == list[Tree] | None
    assert typing._eval_type(other, {"Tree": Tree}, None) == dict[str, Tree]
    assert set(marshal.loads(path.read_bytes())) == {("list[Tree] | None", "<string>", "eval"), ("dict[str, Tree]", "<string>", "eval")}


def test_a_start_that_finds_every_class_does_not_rewrite_the_file(tmp_path):
    """A frozen class's generated `__hash__` holds a salted string hash, so its
    source differs from one process to the next: that alone must not make
    every server start rewrite the whole cache file."""
    import subprocess
    import sys

    path = tmp_path / "code.marshal"
    script = (
        "import attrs, sys\n"
        "from agent_lsp.lsp.code_cache import start_code_cache\n"
        "from pathlib import Path\n"
        "with start_code_cache(Path(sys.argv[1])):\n"
        "    @attrs.frozen\n"
        "    class Key:\n"
        "        name: str\n"
        "    assert hash(Key('a')) == hash(Key('a')) and Key('a') != Key('b')\n"
    )

    def start(seed: str) -> None:
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
        subprocess.run([sys.executable, "-c", script, str(path)], check=True, env=env)

    start("1")
    written = path.read_bytes()
    start("2")
    assert path.read_bytes() == written


def test_the_source_attrs_keeps_of_its_methods_is_dropped_and_they_still_work():
    """attrs keeps each generated method's source for tracebacks, about 1.5 MB for
    lsprotocol's classes; the server drops it once loaded (idle memory)."""
    import linecache

    from agent_lsp.lsp.code_cache import ATTRS_FILE_PREFIX, forget_generated_sources

    point = make_point()
    assert any(name.startswith(ATTRS_FILE_PREFIX) and "Point" in name for name in linecache.cache)
    forget_generated_sources()
    assert not [name for name in linecache.cache if name.startswith(ATTRS_FILE_PREFIX)]
    assert point(1, 2) == point(1, 2) and repr(point(3)) == "Point(x=3, y=0)"
