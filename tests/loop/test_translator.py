"""Strategy candidates are found in an answer's text before any provider is asked."""

from lessonloop.json_blocks import find_block, json_objects
from lessonloop.loop.runner import strategy_candidates
from lessonloop.providers.base import Completion


def test_finds_fenced_json_amid_prose():
    text = 'I think {this} is best.\n```json\n{"aim": 0.3, "draw": 0.5}\n```\nGood luck!'
    assert strategy_candidates(Completion(text)) == [{"aim": 0.3, "draw": 0.5}]


def test_candidates_keep_their_order_the_parsed_answer_first_and_no_schema_echo():
    text = (
        '{"type": "object", "properties": {"aim": {}}} then {"aim": 0.1, "draw": 0.2} '
        '{"$schema": "x"} {"aim": 0.4, "draw": 0.9}'
    )
    parsed = {"aim": 0.7, "draw": 0.7}
    assert strategy_candidates(Completion(text, parsed=parsed)) == [
        parsed,
        {"aim": 0.1, "draw": 0.2},
        {"aim": 0.4, "draw": 0.9},
    ]


def test_no_candidates_without_an_object():
    assert strategy_candidates(Completion("no json here")) == []
    assert strategy_candidates(Completion('{"aim": 0.1,')) == []


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
