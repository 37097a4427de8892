"""Share of bound names that are one or two characters long (issue 19 point 7: names that explain
themselves; the anchors are 3-7 %).

Why a script and not a lint rule: the measure is a share, read side by side before and after a
rename, per module and in total; a rule would only say pass or fail for each name.

A bound name is a binding site, counted once where it binds: an assignment target (plain,
annotated with a value, augmented, walrus, a tuple's parts), a function's parameter, a for-loop
target, a `with ... as` target and an `except ... as` name. Not counted: comprehension targets
and lambda parameters (the conventional short scopes the issue exempts; --all-scopes counts
them too, which comes closest to the issue's 16.7 %: 16.0 % when this script was written), `_`
(the throwaway name), `self` and `cls`, bare annotations, imports, function and class names.

Usage: python bench/short_names.py [PATH ...] [--top N] [--names] [--all-scopes]
  PATH          files or folders (default: src/lessonloop)
  --top N       list the N modules with the most short names (default 15; 0 lists every module)
  --names       print each short name with its line, per module
  --all-scopes  count comprehension targets and lambda parameters too
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SHORT = 2  # a name of at most this many characters is short
EXEMPT = frozenset({"_", "self", "cls"})


@dataclass
class ModuleCount:
    """The bound names of one module: how many, and the short ones with their lines."""

    path: Path
    total: int = 0
    short: list[tuple[int, str]] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * len(self.short) / self.total if self.total else 0.0


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    """The names an assignment target binds (a tuple or list binds each of its parts)."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)
    # an attribute or subscript target (obj.x = ..., row[0] = ...) binds no name


def _parameters(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from arguments.posonlyargs
    yield from arguments.args
    if arguments.vararg is not None:
        yield arguments.vararg
    yield from arguments.kwonlyargs
    if arguments.kwarg is not None:
        yield arguments.kwarg


class _Binder(ast.NodeVisitor):
    """Walks one module and records every binding site as (line, name)."""

    def __init__(self, all_scopes: bool = False) -> None:
        self.bound: list[tuple[int, str]] = []
        self.all_scopes = all_scopes

    def _bind(self, line: int, name: str) -> None:
        if name not in EXEMPT:
            self.bound.append((line, name))

    def _bind_target(self, target: ast.expr) -> None:
        for name_node in _target_names(target):
            self._bind(name_node.lineno, name_node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._bind_target(target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:  # (a bare annotation declares a name, it binds nothing)
            self._bind_target(node.target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind_target(node.target)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.lineno, node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for parameter in _parameters(node.args):
            self._bind(parameter.lineno, parameter.arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        if self.all_scopes:  # else its parameters are a short scope (a walrus in its body counts)
            for parameter in _parameters(node.args):
                self._bind(parameter.lineno, parameter.arg)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if self.all_scopes:  # else the target is a short scope (its conditions may still bind)
            self._bind_target(node.target)
        self.generic_visit(node)


def count_module(path: Path, all_scopes: bool = False) -> ModuleCount:
    """Count the bound names of the Python file at ``path``."""
    binder = _Binder(all_scopes)
    binder.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    count = ModuleCount(path, total=len(binder.bound))
    count.short = [(line, name) for line, name in binder.bound if len(name) <= SHORT]
    return count


def python_files(paths: list[Path]) -> list[Path]:
    """Every .py file under the given files and folders, sorted."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(path.rglob("*.py"))
        elif path.suffix == ".py":
            found.add(path)
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("src/lessonloop")])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--names", action="store_true")
    parser.add_argument("--all-scopes", action="store_true")
    options = parser.parse_args(argv)
    files = python_files(options.paths)
    if not files:
        print("no .py files under the given paths", file=sys.stderr)
        return 2
    counts = [count_module(path, options.all_scopes) for path in files]
    total = sum(count.total for count in counts)
    short = sum(len(count.short) for count in counts)
    ranked = sorted(counts, key=lambda count: (-len(count.short), str(count.path)))
    shown = ranked if options.top == 0 else ranked[: options.top]
    for count in shown:
        if not count.short and options.top != 0:
            break
        print(f"{len(count.short):5d} / {count.total:5d}  {count.percent:5.1f} %  {count.path}")
        if options.names:
            for line, name in count.short:
                print(f"      {count.path}:{line}  {name}")
    percent = 100.0 * short / total if total else 0.0
    print(f"total: {short} short of {total} bound names = {percent:.1f} % in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
