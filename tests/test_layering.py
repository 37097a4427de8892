"""Data flows one way (docs/architecture.md, the layers): the adapters (CLI, MCP server) → the use cases (``app``) →
loop/tasks/memory → knowledge/store. The adapters share code through ``app`` and the engine,
never through each other; the engine never calls back up into ``app`` or an adapter."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import lessonloop

ROOT = Path(lessonloop.__file__).parent
LOWER = {"knowledge", "store", "safety", "scenarios", "providers"}
UPPER = {
    "cli",
    "loop",
    "tasks",
    "memory",
    "promotion",
    "training",
    "mcp",
    "web",
    "integrations",
    "evolve",
    "mission",
    "app",
}
ADAPTERS = {"cli", "mcp", "web"}
ENGINE = {
    "loop",
    "tasks",
    "memory",
    "promotion",
    "training",
    "integrations",
    "evolve",
    "mission",
} | LOWER


@functools.cache
def _parsed() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of the package and its syntax tree, parsed once for the module's tests (each
    parse of the whole package took half a second)."""
    return tuple(
        (path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(ROOT.rglob("*.py"))
    )


@functools.cache
def _imports(with_paths: bool = False) -> tuple:
    """(importing package or top-level module, imported lessonloop package) for every import;
    with ``with_paths``, the importing file too."""
    found = []
    for path, tree in _parsed():
        rel = path.relative_to(ROOT)
        here = ["lessonloop", *rel.parent.parts]
        where = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                names = [".".join(base + [node.module] if node.module else base)]
                if node.module is None:  # from .. import cli
                    names = [f"{names[0]}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "lessonloop" and len(parts) > 1:
                    found.append((where, parts[1], path) if with_paths else (where, parts[1]))
    return tuple(found)


def test_the_import_scan_sees_the_entry_point_importing_the_cli():
    assert ("__main__", "cli") in _imports()


def test_only_the_entry_point_imports_the_cli():
    offenders = sorted(
        {w for w, target in _imports() if target == "cli" and w not in ("cli", "__main__")}
    )
    assert offenders == []


def test_knowledge_store_and_plugins_never_import_the_layers_above_them():
    offenders = sorted({(w, t) for w, t in _imports() if w in LOWER and t in UPPER})
    assert offenders == []


def test_the_adapters_never_import_each_other_and_app_imports_neither():
    # The one exception: the program's entry point, the CLI, starts the server (`lessonloop mcp`).
    offenders = sorted(
        {(w, t) for w, t in _imports() if t in ADAPTERS and w in (ADAPTERS | {"app"}) - {t}}
        - {("cli", "mcp"), ("cli", "web")}
    )
    assert offenders == []
    cli_to_mcp = [
        line.strip()
        for path in (ROOT / "cli").glob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "from ..mcp" in line or "lessonloop.mcp" in line.split("#")[0]
    ]
    assert cli_to_mcp == ["from ..mcp.server import serve"], cli_to_mcp


# What an adapter may import besides ``app``: the shared helpers, the help cache, the version.
ADAPTER_MAY_USE = {"app", "errors", "paths", "help_cache", "__version__"}
ENTRY_POINTS = {  # the commands that start another entry point, not a use case
    ("cli", "mcp"),  # `lessonloop mcp` starts the server
    ("cli", "web"),  # `lessonloop serve` starts the dashboard
    ("cli", "memory"),  # `lessonloop hook` runs memory/hooks.py (what __main__ does directly)
}


def test_the_adapters_call_only_the_use_cases():
    offenders = sorted(
        (where, target)
        for where, target, path in _imports(with_paths=True)
        if where in ADAPTERS
        and target not in ADAPTER_MAY_USE | {where}
        and (where, target) not in ENTRY_POINTS
    )
    assert offenders == []


def test_the_engine_never_imports_the_use_cases_or_an_adapter():
    offenders = sorted({(w, t) for w, t in _imports() if w in ENGINE and t in ADAPTERS | {"app"}})
    assert offenders == []


def test_the_scan_sees_both_adapters_using_app():
    assert {("cli", "app"), ("mcp", "app"), ("web", "app")} <= set(_imports())


def test_no_module_imports_another_modules_private_names():
    """A leading underscore means "this module's own": a name another module needs is public."""
    offenders = []
    for path, tree in _parsed():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("lessonloop")
            ):
                offenders += [
                    f"{path.relative_to(ROOT)}: {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert offenders == []
