"""Generators and recorded function attributes in the import-time evaluator (issue 37):
a generator of the module is made eagerly only for a ``for`` iterating the call itself,
whose body may not change what the generator reads; ``getattr`` of a function reads only
what the evaluator saw recorded on that very function object."""

from svcc.frontends.python._values import Unknown

from tests.frontends.test_evaluator import FUNCTION, reasons, values

GEN = "def squares(xs):\n    for x in xs:\n        yield x * x\n\n\n"


def test_a_for_over_a_generator_of_the_module_is_evaluated() -> None:
    source = GEN + "TABLE = {}\nfor v in squares([1, 2, 3]):\n    TABLE[v] = True\n"
    assert values(source).values["TABLE"] == {1: True, 4: True, 9: True}
    assert reasons(source + FUNCTION) == []


def test_a_generator_not_iterated_at_once_is_not_run() -> None:
    source = GEN + "SEEN = []\nG = squares(SEEN)\nSEEN.append(2)\nOUT = list(G)\n"
    module = values(source)
    assert "G" not in module.values
    assert "OUT" not in module.values


def test_a_loop_changing_what_its_generator_reads_is_unknown() -> None:
    source = (
        "def each(xs):\n    for x in xs:\n        yield x\n\n\n"
        "L = [1]\nfor v in each(L):\n    if v < 3:\n        L.append(v + 1)\n"
    )
    assert "L" not in values(source).values  # Python makes [1, 2, 3]; eagerly, [1, 2]


def test_getattr_of_a_module_function_is_not_known() -> None:
    source = (
        "def mark(f):\n    f.flag = True\n    return f\n\n\n"
        "def g():\n    return 1\n\n\nmark(g)\nX = getattr(g, 'flag', None)\n"
    )
    assert "X" not in values(source).values


def test_unknown_is_what_the_evaluator_raises() -> None:
    assert issubclass(Unknown, Exception)
