"""Find a scenario by name: built-ins, ``path/to/file.py:ClassName`` or the entry-point group.

The loader accepts any class with the minimal interface in ``base`` and reports what is
missing in one line, so a plugin author sees exactly what to add.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LessonloopError, UsageError
from .base import REQUIRED_ATTRIBUTES, REQUIRED_METHODS, Scenario

ENTRY_POINT_GROUP = "lessonloop.scenarios"
BUILTINS = {
    "grid_ctf": "lessonloop.scenarios.grid_ctf:GridCTF",
    "negotiation": "lessonloop.scenarios.negotiation:Negotiation",
}

if TYPE_CHECKING:  # (importlib.metadata is imported only when a plugin may be declared)
    from importlib.metadata import EntryPoint

_cache: dict[str, Scenario] = {}


def _entry_points() -> dict[str, EntryPoint]:
    if not _may_declare_plugins():
        return {}
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _may_declare_plugins() -> bool:
    """False only when no installed distribution can declare the entry-point group: importing
    ``importlib.metadata`` and reading every distribution's metadata costs more than listing
    the scenarios does. It looks where that lookup looks (the ``*.dist-info`` and ``*.egg-info``
    folders on ``sys.path``) for the group's name; anything it cannot read as plainly (a zip or
    an egg on the path, another finder of distributions) counts as a maybe."""
    import os
    from importlib.machinery import PathFinder

    if any(
        getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return True
    for entry in sys.path:
        folder = entry or "."
        if folder.lower().endswith(".egg") or os.path.isfile(folder):
            return True
        try:
            names = os.listdir(folder)
        except OSError:  # a path entry that does not exist holds no distribution
            continue
        for name in names:
            if not name.lower().endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), "rb") as handle:
                    if ENTRY_POINT_GROUP.encode() in handle.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):  # declares no entry point at all
                continue
            except OSError:  # unreadable, or an egg-info that is a file: let the lookup judge
                return True
    return False


def available_names() -> list[str]:
    return sorted(set(BUILTINS) | set(_entry_points()))


def is_file_reference(name: str) -> bool:
    path, sep, cls = name.rpartition(":")
    return bool(sep) and path.endswith(".py") and bool(cls)


def canonical_reference(name: str) -> str:
    """What to store so a run can reload its scenario later (file paths made absolute)."""
    if is_file_reference(name):
        path, _, cls = name.rpartition(":")
        return f"{Path(path).expanduser().resolve()}:{cls}"
    return name


def load(name: str) -> Scenario:
    """Return an instance of the scenario called ``name`` (cached per process)."""
    reference = canonical_reference(name)
    if reference not in _cache:
        _cache[reference] = _instantiate(_resolve_class(reference), reference)
    return _cache[reference]


def _resolve_class(reference: str) -> type:
    if is_file_reference(reference):
        return _class_from_file(reference)
    if reference in BUILTINS:
        module_name, _, cls = BUILTINS[reference].partition(":")
        return getattr(importlib.import_module(module_name), cls)
    entry = _entry_points().get(reference)
    if entry is not None:
        try:
            loaded = entry.load()
        except Exception as exc:  # a broken plugin must not crash the CLI
            raise LessonloopError(f"scenario plugin {reference!r} failed to load: {exc}") from None
        return loaded
    raise UsageError(
        f"unknown scenario {reference!r}; valid scenarios: {', '.join(available_names())} "
        "(or path/to/file.py:ClassName)"
    )


def _class_from_file(reference: str) -> type:
    path_text, _, class_name = reference.rpartition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"scenario file not found: {path}")
    module_name = "lessonloop_plugin_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"cannot import scenario file {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise LessonloopError(
                f"scenario file {path} failed to import: {exc.__class__.__name__}: {exc}"
            ) from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise UsageError(f"scenario file {path} has no class {class_name!r}")
    return cls


def _instantiate(cls: object, reference: str) -> Scenario:
    try:
        scenario: Any = cls() if inspect.isclass(cls) else cls  # a plugin's: checked by hand below
    except Exception as exc:
        raise LessonloopError(f"scenario {reference!r} could not be created: {exc}") from None
    missing = [a for a in REQUIRED_ATTRIBUTES if not hasattr(scenario, a)]
    missing += [m for m in REQUIRED_METHODS if not callable(getattr(scenario, m, None))]
    if missing:
        raise LessonloopError(f"scenario {reference!r} lacks: {', '.join(missing)}")
    if not isinstance(scenario.strategy_schema, dict):
        raise LessonloopError(f"scenario {reference!r}: strategy_schema must be a dict")
    return scenario


def evaluator_epoch(scenario: Scenario) -> str:
    """A short hash of what defines scoring, so only comparable scores are compared."""
    import json

    digest = hashlib.sha256(
        json.dumps(
            [scenario.name, scenario.description, scenario.strategy_schema], sort_keys=True
        ).encode()
    ).hexdigest()[:12]
    return f"{scenario.name}-{digest}"
