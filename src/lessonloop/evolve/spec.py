"""The evolve spec (YAML or JSON): the source and its entry point, how correctness is checked,
the benchmark, limits and the budget. Every field is validated; a problem names its field."""

from __future__ import annotations

import hashlib
import json
import math
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


class Benchmark(BaseModel):
    """What is timed: the entry point on inputs(seed, **args); wall time, lower is better."""

    model_config = ConfigDict(extra="forbid")

    inputs: str  # FILE:FUNCTION
    seed: int = 0
    args: dict = Field(default_factory=dict)
    metric: Literal["wall_time"] = "wall_time"
    direction: Literal["lower"] = "lower"
    # calls per measurement, which is the fastest of them (another process's pause hits one)
    repeat: int = Field(default=3, ge=1, le=10_000)
    warmups: int = Field(default=2, ge=0, le=100)  # untimed calls of each side first
    pairs: int = Field(default=10, ge=3, le=1000)  # pairs of the first look
    max_pairs: int = Field(default=40, ge=3, le=10_000)  # doubled on a close call, up to this
    min_speedup: float = Field(default=1.03, ge=1.0, le=100)  # the least gain worth a champion

    @field_validator("inputs")
    @classmethod
    def _entries(cls, value: str) -> str:
        return _entry(value)

    @model_validator(mode="after")
    def _caps(self) -> Benchmark:
        if self.max_pairs < self.pairs:
            raise ValueError("max_pairs must be >= pairs")
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
    entry: str  # the function in it
    correctness: Correctness
    benchmark: Benchmark
    limits: Limits = Field(default_factory=Limits)
    budget: Budget = Field(default_factory=Budget)

    @field_validator("entry")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"must be a function name, got {value!r}")
        return value


class Loaded:
    """A validated spec with its folder, the baseline source, its parameters and digests."""

    def __init__(self, spec: EvolveSpec, path: Path, text: str):
        self.spec = spec
        self.path = path
        self.folder = path.parent
        self.source_path = self.file(spec.source, "source")
        self.source = self.read(spec.source)
        self.params = declared_params.declared(self.source, spec.source)
        if not self.params:
            raise UsageError(
                f"{self.path}: {spec.source} declares no parameters to tune (add a line such "
                "as '# lessonloop: param BLOCK int 8..256' on an assignment)"
            )
        named = []
        for entry in (spec.correctness.reference, spec.correctness.inputs, spec.benchmark.inputs):
            if entry is not None:
                self.file(entry.rpartition(":")[0], "an entry point's")
                named.append(entry.rpartition(":")[0])
        for name in spec.correctness.files:
            self.file(name, "correctness.files")
            named.append(name)
        # the spec's digest covers the files it names: a changed reference or input generator
        # is a different spec (a receipt made under the old one is refused)
        self.spec_digest = digest(
            json.dumps([text, *((name, self.read(name)) for name in sorted(set(named)))])
        )
        self.source_digest = digest(self.source)

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
