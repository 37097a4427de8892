"""The registry: built-ins, file plugins in minimal form, and the entry-point group."""

from __future__ import annotations

import shutil
import sys

import pytest

from lessonloop.errors import LessonloopError, UsageError
from lessonloop.scenarios import registry

from ..conftest import FIXTURES, PLUGIN, ROOT


def test_builtins_are_listed_and_load():
    names = registry.available_names()
    assert {"grid_ctf", "negotiation"} <= set(names)
    for name in ("grid_ctf", "negotiation"):
        scenario = registry.load(name)
        assert scenario.name == name and scenario.description and scenario.strategy_schema


def test_file_plugin_in_minimal_form_loads_from_a_relative_path(monkeypatch):
    monkeypatch.chdir(FIXTURES)
    scenario = registry.load("plugin_scenario.py:Archery")
    assert scenario.name == "archery"
    assert registry.canonical_reference("plugin_scenario.py:Archery") == PLUGIN


def test_missing_members_are_named():
    with pytest.raises(LessonloopError, match="lacks: strategy_schema, play"):
        registry.load(f"{FIXTURES / 'misbehaving_scenario.py'}:Incomplete")


def test_missing_file_and_class_and_unknown_name():
    with pytest.raises(UsageError, match="not found"):
        registry.load("/nowhere/x.py:X")
    with pytest.raises(UsageError, match="no class 'Nope'"):
        registry.load(f"{FIXTURES / 'plugin_scenario.py'}:Nope")
    with pytest.raises(UsageError, match="valid scenarios: .*grid_ctf.*negotiation"):
        registry.load("chess")


def test_entry_point_plugins_are_discovered(tmp_path, monkeypatch):
    shutil.copy(FIXTURES / "plugin_scenario.py", tmp_path / "archery_plugin.py")
    info = tmp_path / "archery_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: archery-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[lessonloop.scenarios]\narchery = archery_plugin:Archery\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "archery" in registry.available_names()
    assert registry.load("archery").name == "archery"
    sys.modules.pop("archery_plugin", None)


def test_evaluator_epoch_changes_with_the_rules():
    scenario = registry.load(PLUGIN)
    before = registry.evaluator_epoch(scenario)

    class Changed:
        name = scenario.name
        description = scenario.description + " Now with rain."
        strategy_schema = scenario.strategy_schema

    assert registry.evaluator_epoch(Changed()) != before
    assert before.startswith("archery-")


def test_without_a_plugin_the_scenarios_are_listed_without_reading_every_distribution(
    tmp_path, monkeypatch
):
    """``importlib.metadata`` is imported (and every distribution read) only when some
    distribution on the path names the group: `lessonloop scenarios` starts fast without one."""
    import os
    import subprocess

    probe = (
        "import sys\nfrom lessonloop.scenarios import registry\n"
        "print(registry.available_names(), 'importlib.metadata' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
    )
    assert done.stdout.split() == ["['grid_ctf',", "'negotiation']", "False"], done.stderr
    # a distribution that declares another group only is no plugin; one that names ours is
    other = tmp_path / "other-1.0.dist-info"
    other.mkdir()
    (other / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    (tmp_path / "single-1.0.egg-info").write_text("Metadata-Version: 1.0\nName: single\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not registry._may_declare_plugins()
    ours = tmp_path / "archery_plugin-1.0.dist-info"
    ours.mkdir()
    (ours / "entry_points.txt").write_text(
        "[lessonloop.scenarios]\narchery = archery_plugin:Archery\n"
    )
    assert registry._may_declare_plugins()
