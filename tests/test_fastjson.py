"""fastjson gives what json gives, without importing json (the hooks' start-up)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonloop import fastjson

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(values, st.booleans(), st.booleans())
def test_dumps_writes_what_json_writes(value, ensure_ascii, sort_keys):
    expected = json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys)
    assert fastjson.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys) == expected


@given(values, st.sampled_from(["", " ", "\n", " \t\r\n "]))
def test_loads_reads_what_json_reads(value, space):
    text = space + json.dumps(value) + space
    assert fastjson.loads(text) == json.loads(text)
    assert fastjson.loads(text.encode()) == json.loads(text)


@given(st.text(max_size=30))
def test_loads_refuses_what_json_refuses(text):
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            fastjson.loads(text)
    else:
        got = fastjson.loads(text)
        assert got == expected or (isinstance(got, float) and math.isnan(got))


@pytest.mark.parametrize("text", ["", "  ", "{", '{"a": }', "[1,]", "1 2", '{"a": 1} x', "\ufeff1"])
def test_broken_documents_are_value_errors(text):
    with pytest.raises(ValueError):
        fastjson.loads(text)


def test_what_json_cannot_write_fastjson_refuses_alike():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError):
        fastjson.dumps(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        fastjson.dumps({"a": {1, 2}})
    assert fastjson.dumps([math.inf, -math.inf]) == json.dumps([math.inf, -math.inf])


def test_it_does_not_import_json_nor_re_unless_a_document_is_broken():
    done = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from lessonloop import fastjson; "
            "fastjson.loads(fastjson.dumps({'a': [1, 'b']})); "
            "print('json' in sys.modules, 're' in sys.modules)\n"
            "for text in ('{\"a\": }', '[1,]', '1 2', ''):\n"  # (json not imported before)
            "    try: fastjson.loads(text)\n"
            "    except ValueError as error: print(type(error).__name__, error.pos)",
            str(__import__("pathlib").Path(fastjson.__file__).parents[1]),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "False False"
    assert lines[1:] == [f"JSONDecodeError {at}" for at in (6, 3, 2, 0)]
