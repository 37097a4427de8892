"""The answer forms small models write (search/replace blocks, a corrected function without
the rest of its file, code without a file's name), where the verifier's failure points, and
the rule that ranks a verifier's outcome."""

from __future__ import annotations

import subprocess

import pytest

from lessonloop.mission import focus, merge, patch, proposal, replace, verdict

from .conftest import VERIFIER

CALC = '"""Sums."""\n\n\ndef total(n):\n    return sum(range(1, n))\n\n\ndef double(x):\n    return 2 * x\n'


def test_search_replace_blocks_are_parsed_and_applied_forgivingly(tmp_path):
    (tmp_path / "calc.py").write_text(CALC)
    answer = (
        "The range misses n.\nFILE: calc.py\n```\n<<<<<<< SEARCH\n"
        "   5|     return sum(range(1, n))\n=======\n   5|     return sum(range(1, n + 1))\n"
        ">>>>>>> REPLACE\n```"
    )
    change = proposal.parse(answer)
    assert change.kind == "replace" and change.text.startswith("FILE: calc.py\n<<<<<<< SEARCH")
    blocks = proposal.replace_blocks(change.text)
    assert blocks[0].search == ["    return sum(range(1, n))"]  # the copied numbers dropped
    new = replace.new_contents(tmp_path, blocks, ["calc.py"])
    assert "    return sum(range(1, n + 1))\n" in new["calc.py"]
    # no file named, indentation lost: the one file holding the lines, re-indented
    loose = replace.parse("<<<<<<< SEARCH\nreturn 2 * x\n=======\nreturn 3 * x\n>>>>>>> REPLACE")
    assert replace.new_contents(tmp_path, loose, ["calc.py"])["calc.py"].endswith(
        "    return 3 * x\n"
    )
    missing = proposal.replace_blocks(
        "FILE: calc.py\n<<<<<<< SEARCH\nnope\n=======\nx\n>>>>>>> REPLACE"
    )
    with pytest.raises(patch.PatchFailed, match="not in calc.py"):
        replace.new_contents(tmp_path, missing, ["calc.py"])
    escape = proposal.replace_blocks(
        "FILE: ../x.py\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE"
    )
    with pytest.raises(patch.PatchRefused):
        replace.new_contents(tmp_path, escape, ["calc.py"])


def test_a_fragment_is_merged_by_its_definitions_not_written_as_the_file():
    fragment = "import math\n\ndef total(n):\n    return sum(range(1, n + 1))\n"
    merged = merge.merge(CALC, fragment)
    assert merged is not None
    assert "return sum(range(1, n + 1))" in merged and "def double(x):" in merged
    assert merged.index("import math") < merged.index("def total")  # after the docstring
    assert merged.startswith('"""Sums."""\nimport math\n')
    compile(merged, "calc.py", "exec")
    assert merge.merge(CALC, CALC.replace("1, n", "0, n")) is None  # a whole file: as is
    one = '"""Doc."""\n\n\ndef f():\n    return 1\n'
    assert merge.merge(one, "def f():\n    return 2\n") is None  # it may be the whole file
    assert merge.merge(one, "def f():\n    return 2\n", whole=False) == one.replace("1", "2")
    assert merge.merge(CALC, "def other():\n    pass\n") is None  # redefines nothing
    files = {"calc.py": CALC, "test_calc.py": "def total(n):\n    pass\n"}
    assert merge.home_of(files, fragment) == "calc.py"  # the tested file, not the test


def test_code_without_a_file_name_and_a_doubled_fence_are_understood():
    code = proposal.parse("Fixed:\n```python\ndef total(n):\n    return n\n```\n")
    assert code.kind == "code" and code.text.startswith("def total(n):")
    doubled = proposal.parse("FILE: calc.py\n```\n```python\ndef total(n):\n    return n\n```")
    assert (doubled.kind, doubled.text) == ("file", "calc.py\ndef total(n):\n    return n\n")


def test_the_focus_shows_the_failing_line_and_the_function_it_calls(repo):
    run = subprocess.run(VERIFIER.split(), cwd=repo, capture_output=True, text=True)
    shown = focus.focus(repo, run.stderr)
    assert ">  14|         self.assertEqual(total(10), 55)" in shown
    assert "calc.py, where `total` is defined:\n    4| def total(n):" in shown
    assert "6|     return sum(range(1, n))" in shown
    assert focus.focus(repo, "error somewhere else: /etc/passwd:1") == ""


@pytest.mark.parametrize(
    ("before", "after", "is_worse"),
    [
        ((1, "FAILED (failures=1)"), (1, "  File 'x'\nSyntaxError: invalid syntax"), True),
        ((1, "FAILED (failures=1)"), (1, "FAILED (failures=2, errors=1)"), True),
        ((1, "FAILED (failures=2)"), (1, "FAILED (failures=1)"), False),
        ((1, "1 failed, 3 passed"), (2, "ERROR collecting t.py\n1 error during collection"), True),
        ((1, "1 failed, 3 passed"), (None, "killed (timeout) after 300s"), True),
        ((1, "FAILED (failures=1)"), (1, "FAILED (failures=1)"), False),  # as bad: kept
        ((1, "make: *** [all] Error 2"), (1, "something else failed"), False),  # uncounted
        ((1, "Ran 1 test\nFAILED (errors=1)\nunittest.loader._FailedTest"), (0, "OK"), False),
    ],
)
def test_the_verifiers_outcomes_are_ranked(before, after, is_worse):
    assert verdict.worse(verdict.rank(*before), verdict.rank(*after)) is is_worse


def test_a_step_is_undone_when_worse_or_without_effect_and_kept_when_the_failure_moved():
    before = (1, "failed after 0.31s\nAssertionError: 45 != 55\nFAILED (failures=1)")
    assert verdict.undo(before, (1, before[1].replace("0.31s", "0.52s"))) is not None
    assert verdict.undo(before, (1, before[1].replace("45", "44"))) is None
    moved = (1, 'File "t.py", line 9\n' + before[1]), (1, 'File "t.py", line 8\n' + before[1])
    assert verdict.undo(*moved) is not None  # only a line number moved
    assert "worse" in (verdict.undo(before, (1, "SyntaxError: invalid syntax")) or "")
    assert verdict.undo(before, (0, "OK")) is None


def test_a_fix_said_in_prose_is_a_one_line_search_and_replace(tmp_path):
    (tmp_path / "greeting.py").write_text('def greet(name, greeting="Helo"):\n    return name\n')
    answer = (
        'There is a typo: the line `def greet(name, greeting="Helo")` should be '
        '`def greet(name, greeting="Hello")`. After this correction, the tests should pass.'
    )
    change = proposal.parse(answer)
    assert change.kind == "replace"
    blocks = proposal.replace_blocks(change.text)
    new = replace.new_contents(tmp_path, blocks, ["greeting.py"])["greeting.py"]
    assert new.startswith('def greet(name, greeting="Hello"):\n    return name')
    assert proposal.parse("Change `a` to `a`.").kind == "invalid"  # changes nothing


def test_a_suite_cut_down_is_undone_even_when_the_verifier_passes():
    before = (1, "Ran 3 tests in 0.001s\n\nFAILED (errors=2)")
    assert "fewer tests ran (3 before, none counted after)" == verdict.undo(before, (0, ""))
    assert "fewer tests ran" in (verdict.undo(before, (0, "Ran 1 test\n\nOK")) or "")
    assert verdict.undo(before, (0, "Ran 3 tests in 0.002s\n\nOK")) is None
