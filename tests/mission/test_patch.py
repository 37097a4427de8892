"""The applier and the answer parser on what small models write: wrong line numbers, paths
that try to leave the workspace, a file's whole content, a command in JSON."""

from __future__ import annotations

import os

import pytest

from lessonloop.mission import patch, proposal

SOURCE = "a = 1\nb = 2\nc = 3\n"
DIFF = "--- a/m.py\n+++ b/m.py\n@@ -40,2 +40,2 @@\n a = 1\n-b = 2\n+b = 20\n"


def test_a_hunk_is_found_by_its_context_not_its_line_numbers(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    assert patch.apply(tmp_path, DIFF) == ["m.py"]
    assert (tmp_path / "m.py").read_text() == "a = 1\nb = 20\nc = 3\n"


def test_nothing_is_written_unless_every_hunk_applies(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    (tmp_path / "n.py").write_text("x = 1\n")
    bad = "--- a/n.py\n+++ b/n.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" + DIFF.replace("b = 2", "z")
    with pytest.raises(patch.PatchFailed, match="not in the file"):
        patch.apply(tmp_path, bad)
    assert (tmp_path / "n.py").read_text() == "x = 1\n"
    with pytest.raises(patch.PatchFailed, match="changes nothing"):
        patch.apply(tmp_path, "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n a = 1\n")


@pytest.mark.parametrize("name", ["../out.py", "/tmp/out.py", "sub/../../out.py", ".git/config"])
def test_paths_leaving_the_workspace_are_refused(tmp_path, name):
    root = tmp_path / "ws"
    root.mkdir()
    text = f"--- /dev/null\n+++ b/{name.removeprefix('/')}\n@@ -0,0 +1 @@\n+x\n"
    if name.startswith("/"):
        text = f"--- /dev/null\n+++ {name}\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(patch.PatchRefused):
        patch.apply(root, text)
    assert not (tmp_path / "out.py").exists()


def test_a_symlink_out_of_the_workspace_is_refused(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(tmp_path, root / "link")
    with pytest.raises(patch.PatchRefused, match="outside"):
        patch.apply(root, "--- /dev/null\n+++ b/link/out.py\n@@ -0,0 +1 @@\n+x\n")


def test_answers_are_parsed_into_one_change():
    fenced = proposal.parse("Sure:\n```diff\n" + DIFF + "```\nDone.")
    assert fenced.kind == "patch" and fenced.text.startswith("--- a/m.py")
    assert proposal.parse("prose\n" + DIFF).kind == "patch"
    whole = proposal.parse("FILE: pkg/m.py\n```python\nb = 20\n```")
    assert (whole.kind, whole.text) == ("file", "pkg/m.py\nb = 20\n")
    assert proposal.parse("```python m.py\nx\n```").text == "m.py\nx\n"
    command = proposal.parse('```json\n{"command": "pytest -q"}\n```')
    assert (command.kind, command.text) == ("command", "pytest -q")
    assert proposal.parse("I would change b.").kind == "invalid"
    # what a 0.5B model wrote: the FILE line in a block of its own, then the content
    split = proposal.parse("```python\nFILE: m.py\n```\n```python\nb = 20\n```")
    assert (split.kind, split.text) == ("file", "m.py\nb = 20\n")
    inside = proposal.parse("```python\nFILE: m.py\nb = 20\n```")
    assert (inside.kind, inside.text) == ("file", "m.py\nb = 20\n")
    assert proposal.parse("```total.py\n```").kind == "invalid"  # a name, no content


def test_a_files_own_line_ends_and_form_feeds_are_kept(tmp_path):
    crlf = tmp_path / "w.py"
    crlf.write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    patch.apply(tmp_path, DIFF.replace("m.py", "w.py"))
    assert crlf.read_bytes() == b"a = 1\r\nb = 20\r\nc = 3\r\n"  # one line changed, CRLF kept
    paged = tmp_path / "p.py"
    paged.write_text("a = 1\nb = 2  # \x0c page\nc = 3\n")
    patch.apply(tmp_path, "--- a/p.py\n+++ b/p.py\n@@ -1 +1 @@\n-a = 1\n+a = 10\n")
    assert paged.read_text() == "a = 10\nb = 2  # \x0c page\nc = 3\n"


def test_the_workspace_diff_applies_back_to_the_folder_it_came_from(tmp_path):
    """What ``mission apply`` does: the diff from the copy, applied to the user's folder,
    gives the copy's files exactly (an empty new file, CRLF and form feeds included)."""
    from lessonloop.mission import workspace

    user, copy = tmp_path / "user", tmp_path / "copy"
    user.mkdir()
    (user / "w.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    (user / "p.py").write_text("x = 1\n\x0c\ny = 2\n")
    (user / "gone.txt").write_text("")
    workspace.copy(user, copy)
    (copy / "w.py").write_bytes(b"a = 1\r\nb = 3\r\n")
    (copy / "p.py").write_text("x = 1\n\x0c\ny = 3\n")
    (copy / "pkg").mkdir()
    (copy / "pkg" / "__init__.py").write_text("")
    (copy / "gone.txt").unlink()
    diff = workspace.diff(user, copy)
    assert "+b = 3" in diff and "pkg/__init__.py" in diff and "gone.txt" in diff
    patch.apply(user, diff)
    assert workspace.files(user) == workspace.files(copy)
    for name in workspace.files(copy):
        assert (user / name).read_bytes() == (copy / name).read_bytes(), name


def test_a_link_out_of_the_folder_is_not_copied_into_the_workspace(tmp_path):
    from lessonloop.mission import workspace

    user, outside = tmp_path / "user", tmp_path / "outside"
    user.mkdir()
    outside.mkdir()
    (user / "m.py").write_text("x = 1\n")
    os.symlink(outside, user / "out")
    os.symlink(user / "m.py", user / "absolute.py")  # in the copy, still the user's file
    os.symlink("m.py", user / "relative.py")  # in the copy, the copy's file: it stays
    workspace.copy(user, tmp_path / "copy")
    assert not os.path.lexists(tmp_path / "copy" / "out")
    assert not os.path.lexists(tmp_path / "copy" / "absolute.py")
    assert os.readlink(tmp_path / "copy" / "relative.py") == "m.py"


@pytest.mark.parametrize(
    "command", ["pytest --basetemp=/home/u/proj", "rm ../../lessonloop.db", "cat sub/../../x"]
)
def test_an_allowed_command_may_name_no_path_outside_the_workspace(command):
    from lessonloop.mission.runner import allowed

    why = allowed(command, ["pytest", "rm", "cat"])
    assert why is not None and "outside the workspace" in why
    assert allowed("pytest -q tests/test_x.py --basetemp=tmp", ["pytest"]) is None
