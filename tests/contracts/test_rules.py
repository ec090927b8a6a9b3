"""One implementation of each rule, exercised where more than one caller relies on it."""

import pytest
from svcc.contracts.diagnostics import where
from svcc.contracts.errors import InputError
from svcc.contracts.policy import ExecutionPolicy, execution_mode, parse_policy
from svcc.contracts.requirements import canonical_name, is_pinned, requirement_name
from svcc.ir.model import Span
from svcc.ir.python_version import parse_python_version
from svcc.service.config import ConfigError, parse_configuration
from svcc.service.generators import requirement_lines


@pytest.mark.parametrize(
    ("line", "name", "pinned"),
    [
        ("Django", "django", False),
        ("Django >= 4", "django", True),
        ("zope.interface[test]", "zope-interface", False),
        ("Pydantic_Core==2.*", "pydantic-core", True),
        ("pkg @ https://example.invalid/pkg-1.0.tar.gz", "pkg", True),
        ("tomli; python_version < '3.11'", "tomli", True),
    ],
)
def test_requirement_names_follow_packaging(line: str, name: str, pinned: bool) -> None:
    assert requirement_name(line) == name
    assert is_pinned(line) is pinned
    assert canonical_name(name.upper().replace("-", "_")) == name


def test_requirement_name_refuses_what_is_not_a_requirement() -> None:
    with pytest.raises(ValueError, match="invalid requirement"):
        requirement_name("-r other.txt")


def test_an_invalid_requirement_is_said_in_one_line_everywhere() -> None:
    """``packaging``'s message repeats the line with a caret under it; each caller says the
    first line and the caret's column (a requirements file, a pyproject, the service's conf)."""
    reason = "Expected semicolon (after name with no version specifier) or end at column 7"
    with pytest.raises(ValueError, match="invalid requirement") as refused:
        requirement_name("numpy >>= 1")
    assert str(refused.value) == f"invalid requirement 'numpy >>= 1': {reason}"
    with pytest.raises(ConfigError) as bad_conf:
        parse_configuration({"custom_packages": ["numpy >>= 1"]})
    assert "\n" not in str(bad_conf.value)
    assert f"({reason})" in str(bad_conf.value)


def test_the_service_keeps_the_pinned_spelling_of_one_distribution() -> None:
    conf = parse_configuration({"custom_packages": ["Pydantic_Core", "pydantic-core>=2"]})
    lines = requirement_lines(conf)
    assert [ln for ln in lines if canonical_name(ln.split(">")[0]) == "pydantic-core"] == [
        "pydantic-core>=2"
    ]


def test_one_explanation_rule_for_policy_and_configuration() -> None:
    with pytest.raises(InputError) as policy:
        parse_policy({"limits": {"wall_time_ms": 0}}, "p.json")
    assert "'wall_time_ms' must be >= 1: 0 @ $.limits" in str(policy.value)
    with pytest.raises(ConfigError) as conf:
        parse_configuration({"server": {"workers": "two"}})
    assert "expected int" in str(conf.value)
    assert "@ conf.server.workers" in str(conf.value)


def test_one_execution_record() -> None:
    assert execution_mode(None) == {"mode": "direct"}
    assert execution_mode(ExecutionPolicy()) == {"mode": "governed", "backend": "local-process"}


def test_one_span_wording() -> None:
    assert where(Span(line=3, column=0, end_line=3, end_column=1)) == "line 3"
    assert where(Span(line=2, column=0, end_line=2, end_column=1, cell=4)) == "cell 4, line 2"


def test_the_version_rule_names_its_source() -> None:
    assert parse_python_version("3.12") == (3, 12)
    with pytest.raises(ValueError, match=r"unsupported python_version '3\.6'"):
        parse_python_version("3.6", "python_version")
