"""The evolve spec (YAML or JSON): the source and its entry point, how correctness is checked,
the benchmark, limits and the budget. Every field is validated; a problem names its field."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError
from ..tasks.spec import load_file, validation_error
from . import params as declared_params

ENTRY_HELP = "'FILE:FUNCTION' (FILE relative to the spec)"


def _entry(value: str) -> str:
    file, _, function = value.rpartition(":")
    if not file or not function.isidentifier():
        raise ValueError(f"expected {ENTRY_HELP}, got {value!r}")
    return value


class Correctness(BaseModel):
    """A reference compared with the candidate on generated inputs, or a test command."""

    model_config = ConfigDict(extra="forbid")

    reference: str | None = None  # FILE:FUNCTION
    inputs: str | None = None  # FILE:FUNCTION, called as inputs(seed, **args) -> list of args
    seeds: list[int] = Field(default_factory=lambda: [1, 2, 3], min_length=1, max_length=1000)
    args: dict = Field(default_factory=dict)
    tolerance: float = Field(default=1e-9, ge=0)
    command: str | None = Field(default=None, min_length=1, max_length=4000)
    files: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("reference", "inputs")
    @classmethod
    def _entries(cls, value: str | None) -> str | None:
        return None if value is None else _entry(value)

    @model_validator(mode="after")
    def _one_way(self) -> Correctness:
        if self.command is None and (self.reference is None or self.inputs is None):
            raise ValueError("needs 'reference' and 'inputs' (FILE:FUNCTION), or a 'command'")
        if self.command is not None and self.reference is not None:
            raise ValueError("give either 'reference' or 'command', not both")
        return self


METRICS = ("wall", "instructions", "printed")


class Benchmark(BaseModel):
    """What is measured: the entry point on inputs(seed, **args), or a command; its metric
    (``wall`` time, ``instructions`` counted by callgrind, or a number the command
    ``printed``) and whether lower or higher is better."""

    model_config = ConfigDict(extra="forbid")

    inputs: str | None = None  # FILE:FUNCTION
    seed: int = 0
    args: dict = Field(default_factory=dict)
    command: str | None = Field(default=None, min_length=1, max_length=4000)
    files: list[str] = Field(default_factory=list, max_length=100)
    metric: Literal["wall", "wall_time", "instructions", "printed"] = "wall"
    direction: Literal["lower", "higher"] = "lower"
    # the number a 'printed' command reports: the regex's first group (or whole match) in its
    # stdout, the last match counting; default: the last number on stdout
    pattern: str | None = Field(default=None, min_length=1, max_length=400)
    # calls per measurement, which is the best of them (another process's pause hits one)
    repeat: int = Field(default=3, ge=1, le=10_000)
    warmups: int = Field(default=2, ge=0, le=100)  # unmeasured calls of each side first
    pairs: int = Field(default=10, ge=3, le=1000)  # pairs of the first look
    max_pairs: int = Field(default=40, ge=3, le=10_000)  # doubled on a close call, up to this
    min_speedup: float = Field(default=1.03, ge=1.0, le=100)  # the least gain worth a champion

    @field_validator("inputs")
    @classmethod
    def _entries(cls, value: str | None) -> str | None:
        return None if value is None else _entry(value)

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        return "wall" if value == "wall_time" else value

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Benchmark:
        if self.max_pairs < self.pairs:
            raise ValueError("max_pairs must be >= pairs")
        if (self.inputs is None) == (self.command is None):
            raise ValueError("needs 'inputs' (FILE:FUNCTION) or a 'command', exactly one")
        if self.metric == "printed" and self.command is None:
            raise ValueError("metric 'printed' needs a 'command' whose output holds the number")
        if self.metric != "printed" and self.direction == "higher":
            raise ValueError(f"metric {self.metric!r} is a cost: its direction is 'lower'")
        if self.metric != "printed" and self.pattern is not None:
            raise ValueError("'pattern' is for metric 'printed'")
        return self

    @property
    def min_log_gain(self) -> float:
        return math.log(self.min_speedup)


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time: float = Field(default=120.0, gt=0, le=3600)  # seconds per sandbox run
    memory_mb: int = Field(default=1024, ge=64, le=65536)


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generations: int = Field(default=20, ge=1, le=10_000)


class EvolveSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    source: str = Field(min_length=1)  # the file evolved, relative to the spec
    entry: str | None = None  # the function in it (needed by 'reference' and 'inputs')
    # run in the sandbox before the correctness command and before each side is measured
    # (e.g. "cc -O2 -o kernel kernel.c"); a candidate whose build fails is incorrect
    build: str | None = Field(default=None, min_length=1, max_length=4000)
    correctness: Correctness
    benchmark: Benchmark
    limits: Limits = Field(default_factory=Limits)
    budget: Budget = Field(default_factory=Budget)

    @field_validator("entry")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is not None and not value.isidentifier():
            raise ValueError(f"must be a function name, got {value!r}")
        return value

    @model_validator(mode="after")
    def _build_needs_a_command(self) -> EvolveSpec:
        if self.build is not None and self.correctness.command is self.benchmark.command is None:
            raise ValueError(
                "'build' runs before a 'command': give one in correctness or benchmark"
            )
        return self

    @model_validator(mode="after")
    def _entry_needed(self) -> EvolveSpec:
        if self.entry is None and (
            self.correctness.reference is not None or self.benchmark.inputs is not None
        ):
            raise ValueError("'entry' (the function evolved) is needed by 'reference'/'inputs'")
        return self


class Loaded:
    """A validated spec with its folder, the baseline source, its parameters and digests."""

    def __init__(self, spec: EvolveSpec, path: Path, text: str):
        self.spec = spec
        self.path = path
        self.folder = path.parent
        self.source_path = self.file(spec.source, "source")
        self.source = self.read(spec.source)
        self.params = declared_params.declared(self.source, spec.source)
        if spec.benchmark.metric == "instructions" and shutil.which("valgrind") is None:
            raise UsageError(
                f"{self.path}: metric 'instructions' needs valgrind (not found on PATH): "
                "install it or use metric 'wall'"
            )
        named = []
        if spec.entry is not None and spec.source.endswith(".py"):
            self.defines(spec.source, spec.entry, "entry")
        for entry in (spec.correctness.reference, spec.correctness.inputs, spec.benchmark.inputs):
            if entry is not None:
                file, _, function = entry.rpartition(":")
                self.file(file, "an entry point's")
                self.defines(file, function, entry)
                named.append(file)
        for field, names in (
            ("correctness.files", spec.correctness.files),
            ("benchmark.files", spec.benchmark.files),
        ):
            for name in names:
                self.file(name, field)
                named.append(name)
        # the spec's digest covers the files it names: a changed reference or input generator
        # is a different spec (a receipt made under the old one is refused)
        self.spec_digest = digest(
            json.dumps([text, *((name, self.read(name)) for name in sorted(set(named)))])
        )
        self.source_digest = digest(self.source)

    def defines(self, name: str, function: str, what: str) -> None:
        """Refused in one line unless the Python file ``name`` defines ``function`` at its top
        level (found by reading it, before anything runs it)."""
        import ast

        try:
            tree = ast.parse(self.read(name), name)
        except SyntaxError as exc:
            raise UsageError(
                f"{self.path}: {name} is not valid Python (line {exc.lineno})"
            ) from None
        defined = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        if function not in defined:
            raise UsageError(
                f"{self.path}: {name} defines no function {function!r} (named by {what})"
            )

    def require_params(self) -> None:
        """The offline tuner needs declared parameters; a model route does not."""
        if not self.params:
            raise UsageError(
                f"{self.path}: {self.spec.source} declares no parameters to tune (add a line "
                "such as '# lessonloop: param BLOCK int 8..256' on an assignment), or let a "
                "model write candidates (--provider)"
            )

    @property
    def suffix(self) -> str:
        """The source's extension, kept by the candidates' files (a compiler may need it)."""
        return Path(self.spec.source).suffix or ".txt"

    def file(self, name: str, what: str) -> Path:
        """The file ``name`` names: inside the spec's folder (the sandbox gets a copy under the
        same relative name), and existing."""
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts:
            raise UsageError(
                f"{self.path}: {what} file {name!r} must be a path inside the spec's folder"
            )
        path = (self.folder / name).resolve()
        if not path.is_file():
            raise UsageError(f"{self.path}: {what} file {name!r} does not exist ({path})")
        return path

    def read(self, name: str) -> str:
        try:
            return (self.folder / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{self.path}: cannot read {name!r}: {exc}") from None


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse(data: object, source: str) -> EvolveSpec:
    """Validate ``data`` as an evolve spec; the error names the field (and how many more)."""
    if not isinstance(data, dict):
        raise UsageError(f"{source}: an evolve spec is a mapping of fields (name, source, ...)")
    try:
        return EvolveSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, source, "(the spec)") from None


def read(path: str | Path) -> Loaded:
    """Load and validate a spec file, its source and the files it names."""
    data, file, text = load_file(path, "evolve spec")
    spec = parse(data, str(file))
    return Loaded(spec, file.resolve(), text)
