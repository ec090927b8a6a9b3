"""``ModuleIndex.once``: a fact of the whole module computed the first time it is asked and
kept with the IR's index, including a falsy answer (most modules' is "none")."""

from svcc.frontends.python import read_python
from svcc.ir.index import module_index


def test_a_module_fact_is_computed_once_even_when_it_is_false() -> None:
    ir = read_python(
        b"def f(x: int) -> int:\n    return x\n", path="m.py", module="m", python_version=(3, 11)
    ).ir
    assert ir is not None
    index = module_index(ir)
    calls: list[str] = []

    def compute() -> bool:
        calls.append("computed")
        return False

    assert index.once("test.fact", compute) is False
    assert index.once("test.fact", compute) is False
    assert calls == ["computed"]
    assert module_index(ir).once("test.fact", compute) is False  # the same index per IR
    assert calls == ["computed"]
