"""Stale memories: those that name a file or a command the project no longer has.

A memory that says "the test config is in `config/test.exs`" or "run `npm run build` first"
misleads once the file is gone or the script renamed. ``references`` finds what a memory names
(project paths, a backticked command's program, an ``npm run`` script, a ``make``/``just``
target); ``Project`` decides, against the project's folder, which of them are missing; ``check``
marks the memories that name a missing one ``stale`` (``admission.mark_stale``: out of recall
until confirmed) and gives back to recall a stale one whose references are all there again.

Precision over recall: a mark is never a guess. A word counts as a path only when it is shaped
like one (a slash and a file extension, or backticks), never a URL, a system path (``/usr/bin``),
a domain, a version number or "e.g."; a path is missing only when the whole project tree was
read and it is neither at the project's root nor at the end of any path in it (a memory may
name a path from a subfolder), and there is reason to expect it: an earlier check found it, or
its folder is still there (a name at the root: the root is a project's, ``PROJECT_MARKERS``).
What a memorize stores is only looked at by that memorize's check, never marked: what it names
then is found (so that its loss later is seen) or already missing (a memory may say a file was
deleted), and what was missing when a memory was stored never counts as its loss until it is
seen there. A sentence that says something was deleted, renamed, moved or is old names
nothing (``_GONE``). A command is missing only when it is a script or target of a
project file that no longer declares it, or a program (a known one, or one the memory says to
run) an earlier check found on ``PATH`` or in the project's own bins and that is there no more
(a machine that never had it says nothing of the project). Anything undecidable (no manifest, an
``include`` in a Makefile, a tree too big to read) counts as present.

What was checked and when is kept in ``staleness.json`` under the home, with the project folder
it was checked against (``memory audit --stale`` uses it) and a signature of the tree: a memory
is checked again when the tree changed or ``RECHECK_SECONDS`` passed. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from ..store.db import Store

STATE = "staleness.json"
RECHECK_SECONDS = 6 * 3600  # a memory is checked again after this, even in an unchanged tree
WALK_MAX = 50_000  # entries of the project tree read at most; beyond, nothing is missing
WRONG_ROOT = 5  # distinct paths named, none of them present: the folder is not the project

# folders never read: version control, dependencies, build output, caches (a path under one is
# generated or installed, so its absence says nothing)
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".lessonloop",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "_build",
        "deps",
        "target",
        "dist",
        "build",
        "out",
        ".next",
        ".nuxt",
        ".svelte-kit",
        "coverage",
        ".gradle",
        ".idea",
        ".cache",
        "vendor",
        ".elixir_ls",
        ".terraform",
    }
)
# extensions a backticked bare file name (``mix.exs``) must have to count as a path
FILE_EXTENSIONS = frozenset(
    "py pyi js mjs cjs ts tsx jsx json jsonc toml yaml yml ex exs heex eex rb erb go rs md mdx "
    "txt cfg ini lock sh bash zsh fish ps1 sql html htm css scss sass less java kt kts c h cc "
    "cpp hpp cs php swift env xml gradle lua vue svelte conf properties csv tf hcl dockerfile "
    "proto graphql gql r jl scala clj dart nix mk makefile ipynb".split()
)
# programs whose name alone makes a backticked span a command (developer tools)
KNOWN_PROGRAMS = frozenset(
    "npm pnpm yarn bun npx pnpx node deno mix elixir iex erl rebar3 uv uvx pip pip3 pipx poetry "
    "pdm hatch python python3 pytest ruff mypy black flake8 pylint tox nox cargo rustc rustup go "
    "gradle gradlew mvn ant make just cmake bundle rake rails rspec ruby gem composer php "
    "dotnet swift kubectl docker docker-compose podman helm terraform gh jest vitest tsc eslint "
    "prettier biome turbo nx lerna bazel pre-commit playwright cypress alembic django-admin "
    "flask celery gunicorn uvicorn sqlite3 psql mysql redis-cli".split()
)
# a shell's own words: never missing, whatever PATH holds
SHELL_WORDS = frozenset(
    "cd export source . echo set unset alias if then else fi for do done while until case esac "
    "exit eval exec test [ true false read type ulimit umask wait trap pushd popd history "
    "command builtin declare local return function time sudo env nohup".split()
)
_RUNNERS = ("npm", "pnpm", "yarn", "bun")
_RUN_VERB = re.compile(r"\b(?:run|runs|ran|running|execute|executes|invoke|invokes|type)\W*$", re.I)
_BACKTICKED = re.compile(r"(?<!`)`([^`\n]{1,300})`(?!`)")
_SEGMENT = re.compile(r"^[\w.+-]+$")
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,9})$")
_PROGRAM = re.compile(r"^[a-z][a-z0-9._+-]*$")
_NAME = re.compile(r"^[\w:.-]+$")
_EDGE = "\"'()[]{}<>,;:!?*“”‘’"


@dataclass(frozen=True, order=True)
class Reference:
    kind: str  # file, script, target, recipe, program
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


def _path_of(token: str, backticked: bool) -> str | None:
    """The project-relative path ``token`` names, or None when it names none (see the module
    docstring: URLs, system paths, domains, versions, "and/or" are none)."""
    token = token.strip(_EDGE).rstrip(".")
    if not token or any(c in token for c in "$%~@=\\|&#^<>") or "://" in token:
        return None
    if token.startswith(("/", "..", "www.")):
        return None
    explicit = token.startswith("./")
    while token.startswith("./"):
        token = token[2:]
    token = token.rstrip("/")
    segments = token.split("/")
    if not token or not all(s and _SEGMENT.match(s) and s not in (".", "..") for s in segments):
        return None
    if not any(c.isalpha() for c in token):
        return None  # 24/7, 1.2/1.3
    first, last = segments[0], segments[-1]
    if len(segments) > 1 and "." in first[1:]:
        return None  # github.com/owner/repo, example.org/path
    extension = _EXTENSION.search(last)
    if extension and re.search(r"\d\.\d", last) and not explicit:
        return None  # v1.2.3, python3.12
    if len(segments) == 1:  # a bare name: only a backticked file (``mix.exs``) or ``./run.sh``
        if explicit:
            return token
        if not backticked or not extension or extension.group(1).lower() not in FILE_EXTENSIONS:
            return None
        return token
    if extension or explicit or backticked:
        return token
    return None


def _tokens(text: str) -> list[tuple[str, bool]]:
    """Each whitespace-separated word, with whether it stood inside backticks."""
    found = []
    for match in _BACKTICKED.finditer(text):
        found += [(word, True) for word in match.group(1).split()]
    found += [(word, False) for word in _BACKTICKED.sub(" ", text).split()]
    return found


def _command_words(span: str) -> list[str]:
    """A backticked span's words from its program on (assignments and ``sudo`` set aside)."""
    words = span.split()
    while words and (re.match(r"^[A-Za-z_]\w*=", words[0]) or words[0] in ("sudo", "env")):
        words = words[1:]
    return words


def _command_references(text: str) -> list[Reference]:
    found = []
    for match in _BACKTICKED.finditer(text):
        words = _command_words(match.group(1))
        if not words:
            continue
        program = words[0]
        if program.startswith("./"):
            continue  # a project script: a path (``_path_of``)
        if not _PROGRAM.match(program) or program in SHELL_WORDS:
            continue
        rest = words[1:]
        if program in _RUNNERS and len(rest) >= 2 and rest[0] == "run" and _NAME.match(rest[1]):
            found.append(Reference("script", rest[1]))
        elif program in _RUNNERS and rest[:1] == ["test"]:
            found.append(Reference("script", "test"))
        elif program in ("make", "just") and not any(w.startswith("-") for w in rest):
            names = [w for w in rest if "=" not in w and _NAME.match(w)]
            kind = "target" if program == "make" else "recipe"
            found += [Reference(kind, name) for name in names[: 1 if program == "just" else 5]]
        said_to_run = _RUN_VERB.search(text[max(0, match.start() - 24) : match.start()])
        if program in KNOWN_PROGRAMS or (said_to_run and rest and not _code_like(match.group(1))):
            found.append(Reference("program", program))
    return found


def _code_like(span: str) -> bool:
    """Whether a backticked span reads as code rather than a command line."""
    return bool(re.search(r"[(){};=]|->|=>|::", span))


# a sentence that says what it names is gone, moved or wrong: its absence is the lesson
_GONE = re.compile(
    r"\b(?:delet\w*|remov\w*|renam\w*|mov(?:e|ed|es|ing)\b|no longer|not exist\w*|"
    r"doesn'?t exist|does not exist|instead of|old|obsolete|replac\w*|gone|missing|"
    r"was split|were split)",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def references(text: str) -> list[Reference]:
    """What ``text`` (a memory's summary and content) names of the project, each once; none
    from a sentence that says something is deleted, renamed, moved or old (``_GONE``)."""
    if not isinstance(text, str) or not text:
        return []
    found: set[Reference] = set()
    for sentence in _SENTENCE.split(text):
        if not sentence.strip() or _GONE.search(sentence):
            continue
        found.update(Reference("file", p) for w, b in _tokens(sentence) if (p := _path_of(w, b)))
        found.update(_command_references(sentence))
    return sorted(found)


PROJECT_MARKERS = (
    ".git",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "mix.exs",
    "Cargo.toml",
    "go.mod",
    "Gemfile",
    "composer.json",
    "pom.xml",
    "build.gradle",
    "Makefile",
    "justfile",
)


class Project:
    """The project folder as one check sees it: its tree (read once, bounded), manifests and
    ``PATH``. ``which`` finds a program (``shutil.which`` by default); ``present``: the
    references an earlier check found here (``str(Reference)``), whose absence now is a loss;
    ``skip``: a folder not to read (the lessonloop home)."""

    def __init__(
        self,
        root: str,
        which: Callable[[str], str | None] | None = None,
        present: Iterable[str] = (),
        skip: str | None = None,
    ):
        self.root = os.path.abspath(root)
        self.which = which or shutil.which
        self.present_before = set(present)
        self.present_now: set[str] = set()
        self.skip = os.path.abspath(skip) if skip else None
        self._tree: tuple[set[str], bool, str] | None = None
        self._scripts: set[str] | None | bool = False
        self._targets: dict[str, object] = {}

    def tree(self) -> tuple[set[str], bool, str]:
        """Every path under the root (relative, ``/``-separated), whether the walk read it all,
        and a signature that changes when anything is added, removed or renamed."""
        if self._tree is None:
            self._tree = _walk(self.root, self.skip)
        return self._tree

    def has_path(self, path: str) -> bool | None:
        """True, False (missing) or None (cannot tell). Missing takes a whole tree without it
        anywhere, and a reason to expect it: an earlier check found it, or its folder is here
        (for a name at the root: the root is a project's)."""
        if path.split("/")[0] in SKIP_DIRS:
            return None
        if os.path.lexists(os.path.join(self.root, *path.split("/"))):
            return True
        paths, whole, _ = self.tree()
        if not whole:
            return None
        suffix = "/" + path
        if any(p.endswith(suffix) for p in paths):
            return True
        if f"file {path}" in self.present_before:
            return False
        parent = path.rpartition("/")[0]
        if parent:
            return False if os.path.isdir(os.path.join(self.root, *parent.split("/"))) else None
        is_project = any(os.path.lexists(os.path.join(self.root, m)) for m in PROJECT_MARKERS)
        return False if is_project else None

    def scripts(self) -> set[str] | None:
        """The scripts of the project's package.json files (None when it has none readable)."""
        if self._scripts is False:
            self._scripts = _package_scripts(self)
        return self._scripts if isinstance(self._scripts, set) else None

    def state(self, ref: Reference) -> bool | None:
        """Whether ``ref`` is there (True), gone (False) or cannot be told (None)."""
        there: bool | None = None
        if ref.kind == "file":
            there = self.has_path(ref.name)
        elif ref.kind == "script":
            scripts = self.scripts()
            there = None if scripts is None else ref.name in scripts
        elif ref.kind in ("target", "recipe"):
            declared = self._declared(ref.kind)
            there = None if declared is None else _declares(declared, ref.name)
        elif ref.kind == "program":
            there = self._has_program(ref.name) or (
                False if str(ref) in self.present_before else None
            )
        if there:
            self.present_now.add(str(ref))
        return there

    def missing(self, ref: Reference) -> bool:
        """Whether ``ref`` is gone from the project (never a guess)."""
        return self.state(ref) is False

    def _declared(self, kind: str) -> tuple[set[str], list[re.Pattern]] | None:
        if kind not in self._targets:
            names = (
                ("GNUmakefile", "makefile", "Makefile")
                if kind == "target"
                else ("justfile", "Justfile", ".justfile")
            )
            self._targets[kind] = _read_targets(self.root, names, kind)
        value = self._targets[kind]
        return value if isinstance(value, tuple) else None

    def _has_program(self, program: str) -> bool:
        if f"program {program}" in self.present_now or self.which(program):
            return True
        return any(
            os.path.exists(os.path.join(self.root, folder, program))
            for folder in ("node_modules/.bin", ".venv/bin", "venv/bin", "bin", "vendor/bin")
        )


def _walk(root: str, skip: str | None = None) -> tuple[set[str], bool, str]:
    import hashlib

    found: set[str] = set()
    digest = hashlib.sha256(os.environ.get("PATH", "").encode())
    stack = [("", root)]
    while stack:
        relative, folder = stack.pop()
        try:
            stat = os.stat(folder)
            digest.update(f"{relative}\0{stat.st_mtime_ns}\0".encode("utf-8", "replace"))
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            path = f"{relative}/{entry.name}" if relative else entry.name
            found.add(path)
            if len(found) > WALK_MAX:
                return found, False, ""
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and entry.name not in SKIP_DIRS and entry.path != skip:
                stack.append((path, entry.path))
            elif entry.name in ("package.json", "Makefile", "makefile", "GNUmakefile", "justfile"):
                try:  # (an edited manifest changes no folder's time)
                    digest.update(f"{path}\0{entry.stat().st_mtime_ns}\0".encode())
                except OSError:
                    pass
    return found, True, digest.hexdigest()[:32]


def _package_scripts(project: Project) -> set[str] | None:
    """Every script any package.json of the project declares (the root's, or a workspace's
    within three folders), None when none can be read."""
    candidates = [os.path.join(project.root, "package.json")]
    if not os.path.exists(candidates[0]):
        paths, _, _ = project.tree()
        candidates = [
            os.path.join(project.root, *p.split("/"))
            for p in sorted(paths)
            if p.endswith("package.json")
            and p.count("/") <= 3
            and p.split("/")[-1] == "package.json"
        ]
    scripts: set[str] | None = None
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return None  # one unreadable manifest: cannot tell
        declared = value.get("scripts") if isinstance(value, dict) else None
        scripts = (scripts or set()) | (set(declared) if isinstance(declared, dict) else set())
    return scripts


_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)", re.M)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)(?:\s[^:=\n]*)?:(?!=)", re.M)
_JUST_ALIAS = re.compile(r"^alias\s+([\w-]+)\s*:=", re.M)


def _read_targets(
    root: str, names: tuple[str, ...], kind: str
) -> tuple[set[str], list[re.Pattern]] | None:
    """The targets (with their ``%`` patterns) a Makefile, or the recipes a justfile, declares;
    None when there is none or it includes others (they may declare the rest)."""
    for name in names:
        try:
            with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                text = handle.read(2_000_000)
        except OSError:
            continue
        if re.search(r"^\s*-?(?:s?include|import|mod)\s", text, re.M):
            return None
        if kind == "recipe":
            return set(_JUST_RECIPE.findall(text)) | set(_JUST_ALIAS.findall(text)), []
        targets: set[str] = set()
        patterns: list[re.Pattern] = []
        for match in _RULE.finditer(text):
            for target in match.group(1).split():
                if "%" in target:
                    patterns.append(re.compile(re.escape(target).replace("%", ".+") + "$"))
                elif "$" not in target:
                    targets.add(target)
        return targets, patterns
    return None


def _declares(declared: tuple[set[str], list[re.Pattern]], name: str) -> bool:
    targets, patterns = declared
    return name in targets or any(p.match(name) for p in patterns)


# -- checking the store's memories ----------------------------------------------------------


def project_dir(
    home: str | os.PathLike, cwd: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The project folder a home's memories are checked against: ``$CLAUDE_PROJECT_DIR``, the
    folder holding a ``.lessonloop`` home, the session's ``cwd``, else the folder the last
    check used; None when none is a folder."""
    environ = os.environ if environ is None else environ
    home = os.path.abspath(home)
    candidates = [
        environ.get("CLAUDE_PROJECT_DIR") or None,
        os.path.dirname(home) if os.path.basename(home) == ".lessonloop" else None,
        cwd or None,
        load_state(home).get("project"),
    ]
    for candidate in candidates:
        if isinstance(candidate, str) and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    return None


def load_state(home: str | os.PathLike) -> dict:
    try:
        with open(os.path.join(home, STATE), encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _save_state(home: str | os.PathLike, state: dict) -> None:
    path = os.path.join(home, STATE)
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    os.replace(temporary, path)


@dataclass
class Finding:
    """A memory checked: the references it names that are missing, and what was done."""

    entry_id: int
    number: int
    summary: str
    missing: list[str]
    action: str  # marked, kept (confirmed since), restored (all back), stale (still)


def check(
    store: Store,
    home: Path,
    project: str,
    *,
    force: bool = False,
    which: Callable[[str], str | None] | None = None,
    now: float | None = None,
    fresh_since: str | None = None,
) -> list[Finding]:
    """Check the project memories of ``store`` against the folder ``project``: mark those that
    name a missing reference stale, give back the stale ones whose references are all there
    again. ``force``: every memory, however recently checked (``memory audit --stale``);
    ``fresh_since``: memories created since then (this memorize's) are only looked at, never
    marked (what they name never was here, so it is not lost)."""
    from ..knowledge import admission
    from ..knowledge.entries import MEMORY_KINDS, Entry

    now = time.time() if now is None else now
    state = load_state(home)
    same_project = state.get("project") == os.path.abspath(project)
    present = state.get("present") if same_project else None
    present = [p for p in present if isinstance(p, str)] if isinstance(present, list) else []
    folder = Project(project, which, present, skip=str(home))
    marks = ",".join("?" * len(MEMORY_KINDS))
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = 'project' AND kind IN ({marks}) "
        "AND status IN ('active', 'stale') ORDER BY id",
        MEMORY_KINDS,
    )
    named = [(e, refs) for e in map(Entry.from_row, rows) if (refs := references(_text(e)))]
    if not named:
        return []
    _, whole, signature = folder.tree()
    same_tree = whole and same_project and state.get("tree") == signature
    checked = state.get("checked") if same_tree and isinstance(state.get("checked"), dict) else {}
    assert isinstance(checked, dict)
    # what each memory named that was already missing when it was stored: never its loss
    born = state.get("born_missing") if same_project else None
    born = born if isinstance(born, dict) else {}
    due = [
        (entry, refs)
        for entry, refs in named
        if force
        or entry.status == "stale"
        or not isinstance(checked.get(str(entry.id)), (int, float))
        or now - checked[str(entry.id)] >= RECHECK_SECONDS
    ]
    if _wrong_root(folder, [r for _, refs in due for r in refs]):
        return []
    findings = []
    for entry, refs in due:
        states = {str(r): folder.state(r) for r in refs}
        missing = [name for name, there in states.items() if there is False]
        key = str(entry.id)
        checked[key] = now
        if fresh_since and entry.created_at >= fresh_since:
            if missing:
                born[key] = missing
            continue
        excused = {r for r in born.get(key, ()) if isinstance(r, str) and not states.get(r)}
        if excused:
            born[key] = sorted(excused)  # (one seen here since counts from now on)
            missing = [name for name in missing if name not in excused]
        else:
            born.pop(key, None)
        if entry.status == "stale":
            back = stale_marked(store, entry.id)
            if not missing and back and all(states.get(name) for name in back):
                admission.mark_fresh(store, entry.id, "what it names is back", root=home)
                findings.append(Finding(entry.id, entry.number, entry.summary, [], "restored"))
            else:
                findings.append(Finding(entry.id, entry.number, entry.summary, missing, "stale"))
        elif missing:
            outcome = admission.mark_stale(store, entry.id, missing, root=home)
            action = "marked" if outcome.action == "stale" else "kept"
            findings.append(Finding(entry.id, entry.number, entry.summary, missing, action))
    live = {str(entry.id) for entry, _ in named}
    named_now = {str(r) for _, refs in named for r in refs}
    state = {
        "project": folder.root,
        "tree": signature,
        "checked": {k: v for k, v in checked.items() if k in live},
        "born_missing": {k: v for k, v in born.items() if k in live},
        # what the memories name that was ever found here: its absence later is a loss
        "present": sorted((folder.present_before | folder.present_now) & named_now),
    }
    try:
        _save_state(home, state)
    except OSError:
        pass  # (a read-only home: checked again next time)
    return findings


def stale_marked(store: Store, entry_id: int) -> list[str]:
    """The references the memory's last ``stale`` mark named missing."""
    from ..knowledge.admission import stale_references

    row = store.query_one(
        "SELECT detail FROM knowledge_events WHERE knowledge_id = ? AND action = 'stale' "
        "ORDER BY id DESC LIMIT 1",
        (entry_id,),
    )
    return stale_references(row["detail"]) if row else []


def _text(entry) -> str:
    return f"{entry.summary}\n{entry.content}"


def _wrong_root(folder: Project, refs: Iterable[Reference]) -> bool:
    """Whether the folder cannot be the memories' project: it holds none of the many paths
    they name."""
    paths = {r.name for r in refs if r.kind == "file"}
    if len(paths) < WRONG_ROOT:
        return False
    return not any(
        os.path.lexists(os.path.join(folder.root, *p.split("/"))) or folder.has_path(p)
        for p in paths
    )
