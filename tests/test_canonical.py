"""The canonical JSON text is json's own, with sorted keys, for every kind of value."""

from __future__ import annotations

import json
import math

import pytest

from lessonloop import canonical

VALUES = [
    {"b": 1, "a": [1.5, 2, None, True, False], "c": {"z": 'é\n"x"', "y": -0.0}},
    {"aggression": 0.7123456789012345, "defense_radius": 2, "mode": "bold"},
    [],
    {},
    "plain ✓ text",
    3,
    2.5e-300,
    1e300,
    None,
    True,
    {"nan": math.nan, "inf": math.inf, "minf": -math.inf},
    {1: "int key", 2: "another"},
    [[[[{"deep": [1, {"deeper": "x"}]}]]]],
    (1, 2),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_text_is_json_dumps_with_sorted_keys(value):
    assert canonical.dumps(value) == json.dumps(value, sort_keys=True)


def test_what_json_cannot_write_fails_as_it_does_and_the_encoder_stays_usable():
    with pytest.raises(TypeError, match="not JSON serializable"):
        canonical.dumps({"a": {1, 2}})
    with pytest.raises(TypeError):
        canonical.dumps({"a": 1, 2: 3})  # keys of mixed types cannot be sorted
    assert canonical.dumps({"a": [1]}) == '{"a": [1]}'
