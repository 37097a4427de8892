"""A task as data: what to produce, and how it is scored (a rubric for a judge, a verifier
command, or both). YAML or JSON; every field is validated and a problem names its field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError

FORMAT_EXTENSIONS = {"text": "txt", "markdown": "md", "json": "json"}
CODE_EXTENSIONS = {
    "python": "py",
    "sql": "sql",
    "javascript": "js",
    "typescript": "ts",
    "bash": "sh",
    "shell": "sh",
    "sh": "sh",
    "go": "go",
    "rust": "rs",
    "ruby": "rb",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "yaml": "yaml",
    "toml": "toml",
    "html": "html",
    "css": "css",
}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,79}$")


class Dimension(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=60)
    weight: float = Field(default=1.0, gt=0, le=100)
    description: str = Field(default="", max_length=1000)


class Verifier(BaseModel):
    """A command that passes on exit 0. ``{file}`` is the output's file name in the sandbox's
    working directory (without it, the output arrives on stdin); ``{task_dir}`` is the folder of
    the task file and ``{python}`` this Python interpreter."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, max_length=4000)
    timeout: float = Field(default=30.0, gt=0, le=600)


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    prompt: str = Field(min_length=1, max_length=20_000)
    rubric: list[Dimension] | None = None
    output_format: Literal["text", "markdown", "json", "code"] = "text"
    json_schema: dict | None = None
    language: str | None = Field(default=None, max_length=30)
    reference: str | None = Field(default=None, max_length=20_000)
    required_concepts: list[str] = Field(default_factory=list, max_length=50)
    required_strings: list[str] = Field(default_factory=list, max_length=50)
    verifier: Verifier | None = None
    threshold: float = Field(default=0.9, ge=0, le=1)
    max_rounds: int = Field(default=5, ge=1, le=50)
    judge_samples: int = Field(default=1, ge=1, le=10)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                "1-80 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit"
            )
        return value

    @field_validator("rubric", mode="before")
    @classmethod
    def _rubric(cls, value):
        """``rubric: {dimensions: [...]}`` and ``rubric: [...]`` mean the same."""
        if isinstance(value, dict) and set(value) == {"dimensions"}:
            return value["dimensions"]
        return value

    @field_validator("json_schema")
    @classmethod
    def _schema(cls, value):
        if value is not None:
            from jsonschema import exceptions, validators

            try:
                validators.validator_for(value).check_schema(value)
            except exceptions.SchemaError as exc:
                raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return value

    @model_validator(mode="after")
    def _scored_somehow(self) -> TaskSpec:
        if not self.rubric and self.verifier is None and self.json_schema is None:
            raise ValueError(
                "a task needs a way to be scored: a rubric (for a judge), a "
                "verifier command, or a json_schema"
            )
        if self.rubric is not None:
            names = [d.name for d in self.rubric]
            if len(set(names)) != len(names):
                raise ValueError("rubric dimension names must be unique")
        if self.json_schema is not None and self.output_format != "json":
            raise ValueError("json_schema only applies to output_format: json")
        return self

    @property
    def needs_judge(self) -> bool:
        return bool(self.rubric)

    @property
    def extension(self) -> str:
        if self.output_format == "code":
            return CODE_EXTENSIONS.get((self.language or "").lower(), "txt")
        return FORMAT_EXTENSIONS[self.output_format]

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-") or "task"


def validation_error(exc: ValidationError, source: str, whole: str) -> UsageError:
    """One line for a spec that failed validation (a task's, an evolve spec's): the first
    field at fault (``whole`` when it is the spec itself), and how many more are wrong."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or whole
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return UsageError(f"{source}: field {where!r}: {message}{more}")


def parse(data: object, source: str) -> TaskSpec:
    """Validate ``data`` as a task; the error names the field (and how many more are wrong)."""
    if not isinstance(data, dict):
        raise UsageError(f"{source}: a task is a mapping of fields (name, prompt, ...)")
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, source, "(the task)") from None


def load_file(path: str | Path, what: str) -> tuple[object, Path, str]:
    """A spec file's data (YAML, or JSON by its suffix), its path and its text; a wrong path,
    an unreadable file or a parse error is one line naming ``what`` it is."""
    import yaml

    from ..files import MB, read_user_file

    if not str(path).strip():
        raise UsageError(f"no {what} given")
    file = Path(path).expanduser()
    text = read_user_file(file, what, limit=MB)
    try:
        data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UsageError(
            f"{file} is not valid {'JSON' if file.suffix == '.json' else 'YAML'}: "
            f"{' '.join(str(exc).split())}"
        ) from None
    return data, file, text


def read(path: str | Path) -> tuple[TaskSpec, Path]:
    """Load a task file (YAML, or JSON); returns the spec and the file's absolute path."""
    data, file, _ = load_file(path, "task file")
    return parse(data, str(file)), file.resolve()


def dump(spec: TaskSpec) -> str:
    """The spec as YAML, fields in their declared order, defaults left out."""
    import yaml

    return yaml.safe_dump(
        spec.model_dump(exclude_defaults=True), sort_keys=False, allow_unicode=True, width=100
    )
