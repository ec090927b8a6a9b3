"""The reviewed table of names libraries removed (SVC-R060): each entry is absent from the
installed library, which is at or past the version the entry names; a helper reading one
is conditional, the same helper with the replacement eligible."""

import importlib
import importlib.metadata

import pytest
from packaging.version import Version
from svcc.compiler.driver import analyze_source
from svcc.contracts.requirements import parse_requirements
from svcc.frontends.removed_names import REMOVED_NAMES, removed_name


@pytest.mark.parametrize("name", sorted(REMOVED_NAMES))
def test_entry_is_absent_from_the_installed_library(name: str) -> None:
    distribution, version, _ = REMOVED_NAMES[name]
    module, attribute = name.rsplit(".", 1)
    assert Version(importlib.metadata.version(distribution)) >= Version(version)
    assert not hasattr(importlib.import_module(module), attribute)


def test_attributes_of_a_removed_name_are_that_name() -> None:
    assert removed_name("pandas.datetools.timedelta") == "pandas.datetools"
    assert removed_name("numpy.float") == "numpy.float"
    assert removed_name("numpy.float64") is None
    assert removed_name("numpy.floating") is None


def test_a_helper_reading_a_removed_name_is_conditional_with_the_replacement() -> None:
    text = (
        "import numpy as np\n\n\n"
        "def old(x: list[int]) -> list[float]:\n"
        "    return np.asarray(x).astype(np.float).tolist()\n\n\n"
        "def new(x: list[int]) -> list[float]:\n    return np.asarray(x).astype(float).tolist()\n"
    )
    analysis = analyze_source(
        text.encode(),
        path="m.py",
        module="m",
        python_version="3.11",
        requirements=parse_requirements("numpy\n", "<test>"),
    )
    assert analysis.readiness is not None
    verdicts = {a.name: a for a in analysis.readiness.assessments}
    assert verdicts["new"].klass == "eligible"
    assert verdicts["old"].klass == "conditional"
    [reason] = verdicts["old"].reasons
    assert reason.code == "SVC-R060"
    assert "use float" in reason.message
