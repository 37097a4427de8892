"""The translator finds strategy JSON in prose before any provider is asked."""

from lessonloop.json_blocks import find_block, json_objects
from lessonloop.loop.translator import find_strategy

SCHEMA = {"type": "object", "properties": {"aim": {}, "draw": {}}}


def test_finds_fenced_json_amid_prose():
    text = 'I think {this} is best.\n```json\n{"aim": 0.3, "draw": 0.5}\n```\nGood luck!'
    assert find_strategy(text, SCHEMA) == {"aim": 0.3, "draw": 0.5}


def test_prefers_the_object_matching_the_schema_and_the_last_on_ties():
    text = '{"note": 1} first {"aim": 0.1, "draw": 0.2} then revised {"aim": 0.4, "draw": 0.9}'
    assert find_strategy(text, SCHEMA) == {"aim": 0.4, "draw": 0.9}


def test_returns_none_without_a_matching_object():
    assert find_strategy("no json here", SCHEMA) is None
    assert find_strategy('{"other": 1}', SCHEMA) is None
    assert find_strategy('{"aim": 0.1,', SCHEMA) is None


def test_nested_objects_are_not_split():
    assert json_objects('x {"a": {"b": 1}} y') == [{"a": {"b": 1}}]


def test_blocks_are_found_tolerantly():
    text = 'Here you go:\n```\n{"edits": [{"op": "add_bullet", "text": "x",},],}\n```\nthanks'
    assert find_block(text, "edits") == {"edits": [{"op": "add_bullet", "text": "x"}]}
    assert find_block('{"a": 1} {"edits": []} {"b": 2}', "edits") == {"edits": []}
    assert find_block("no block", "edits") is None
    assert json_objects('{"x": NaN} {"y": 1}') == [{"y": 1}]


def test_pathological_answers_do_not_break_parsing():
    assert json_objects('{"a": ' * 3000) == []
    assert find_block("{" * 50_000 + '{"edits": []}', "edits") == {"edits": []}
    assert find_block('x {"edits": [1]}', "edits") == {"edits": [1]}
