"""The evolve spec and declared parameters: a problem is one line naming its field."""

from __future__ import annotations

import pytest

from lessonloop.errors import UsageError
from lessonloop.evolve import params, spec


def _write(folder, text):
    path = folder / "spec.yaml"
    path.write_text(text)
    return path


def test_the_example_kernel_loads_with_its_three_params():
    loaded = spec.read("examples/evolve-kernel/spec.yaml")
    assert [(p.name, p.kind) for p in loaded.params] == [
        ("METHOD", "choice"),
        ("BLOCK", "int"),
        ("SLOPPY", "choice"),
    ]
    assert params.defaults(loaded.params) == {"METHOD": "naive", "BLOCK": 1, "SLOPPY": False}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("entry: total", "entry: not a name"), "field 'entry': must be a function name"),
        (("  pairs: 6", "  pairs: 1"), "field 'benchmark.pairs'"),
        (
            ("  reference: reference.py:total", "  reference: total"),
            "field 'correctness.reference'",
        ),
        (
            ("limits: {time: 30}", "limits: {time: 30, disk: 1}"),
            "field 'limits.disk': unknown field",
        ),
        (("  max_pairs: 12", "  max_pairs: 4"), "max_pairs must be >= pairs"),
        (("source: kernel.py", "source: gone.py"), "source file 'gone.py' does not exist"),
        (("source: kernel.py", "source: ../kernel.py"), "must be a path inside the spec's folder"),
        (("entry: total", "entry: no_such_fn"), "kernel.py defines no function 'no_such_fn'"),
        (
            ("  reference: reference.py:total", "  reference: reference.py:nothing"),
            "reference.py defines no function 'nothing' (named by reference.py:nothing)",
        ),
    ],
)
def test_a_bad_spec_names_its_field(kernel_dir, change, expected):
    text = (kernel_dir / "spec.yaml").read_text()
    assert change[0] in text
    with pytest.raises(UsageError) as caught:
        spec.read(_write(kernel_dir, text.replace(*change)))
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_correctness_needs_a_reference_or_a_command(kernel_dir):
    text = (kernel_dir / "spec.yaml").read_text().replace("  reference: reference.py:total\n", "")
    with pytest.raises(UsageError, match="field 'correctness': needs 'reference' and 'inputs'"):
        spec.read(_write(kernel_dir, text))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("X = 3  # lessonloop: param X int 1..2", "outside 1.0..2.0"),
        ("X = 3  # lessonloop: param X int 5..1", "LO < HI"),
        ("X = 3  # lessonloop: param X tuple 1..2", "expected 'int LO..HI'"),
        ("X = 'c'  # lessonloop: param X choice a,b", "not one of"),
        ("# lessonloop: param X int 1..9\n\nX = 3", "no assignment 'X = ...'"),
    ],
)
def test_a_bad_declaration_names_its_line(line, expected):
    with pytest.raises(UsageError, match="kernel.py line 1: param X") as caught:
        params.declared(line + "\n", "kernel.py")
    assert expected in str(caught.value)


def test_substitution_changes_only_the_declared_assignments():
    source = 'A = 8  # lessonloop: param A int 1..64\n# lessonloop: param B choice "x","y"\nB = "x"\nC = 8\n'
    found = params.declared(source)
    changed = params.substitute(source, found, {"A": 32, "B": "y"})
    assert (
        changed
        == 'A = 32  # lessonloop: param A int 1..64\n# lessonloop: param B choice "x","y"\nB = \'y\'\nC = 8\n'
    )
    assert params.declared(changed)[0].default == 32


def test_a_source_without_parameters_is_refused_by_the_offline_tuner(kernel_dir):
    kernel = kernel_dir / "kernel.py"
    kernel.write_text(kernel.read_text().replace("# lessonloop: param", "# param"))
    loaded = spec.read(kernel_dir / "spec.yaml")  # a model route could still write candidates
    with pytest.raises(UsageError, match="kernel.py declares no parameters to tune"):
        loaded.require_params()
