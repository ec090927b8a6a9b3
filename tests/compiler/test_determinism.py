"""Same input, same bytes: across runs, hash seeds and worker counts."""

import json
from pathlib import Path

import pytest
from helpers import GOLDEN, ROOT, run_svcc

SEEDS = ["0", "1", "12345"]


@pytest.mark.parametrize(
    "target",
    [
        ROOT / "examples" / "shapes.py",
        GOLDEN / "notebook_magics" / "input.ipynb",
        GOLDEN / "typeddict_nested" / "input.py",
    ],
)
def test_inspect_bytes_do_not_depend_on_hash_seed(target: Path) -> None:
    for args in (["--format", "json"], ["--ir"]):
        outputs = {
            run_svcc("inspect", str(target), *args, env={"PYTHONHASHSEED": s}).stdout for s in SEEDS
        }
        assert len(outputs) == 1
        (only,) = outputs
        assert only.endswith("}\n")
        assert json.loads(only)


def test_directory_output_is_stable(tmp_path: Path) -> None:
    outputs = set()
    for seed in SEEDS:
        proc = run_svcc("inspect", str(GOLDEN), "--format", "json", env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 2  # bundle files (app.py, server.py) take reserved names
        outputs.add(proc.stdout)
    assert len(outputs) == 1


def test_compiled_tree_is_byte_identical(tmp_path: Path) -> None:
    trees = []
    for seed in SEEDS:
        out = tmp_path / f"out{seed}"
        proc = run_svcc(
            "compile",
            str(ROOT / "examples" / "shapes.py"),
            "--target",
            "ir",
            "--output-dir",
            str(out),
            env={"PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0
        trees.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert trees[0] == trees[1] == trees[2]


def test_canonical_encoding_rules() -> None:
    from svcc.ir.canonical import canonical_json

    assert canonical_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}\n'.encode()
    with pytest.raises(ValueError, match="Out of range"):
        canonical_json({"x": float("nan")})
