"""The diagnostic table: unique, contiguous, documented, and every code triggered."""

import re
import subprocess
import sys

from helpers import ROOT, case_input, case_options, cases, expected_markers
from svcc.contracts.diagnostics.codes import REGISTRY, markdown_page

# Codes once published are never renumbered or reused; retiring one keeps its number.
PUBLISHED = (
    [f"SVC-R{n:03d}" for n in range(1, 20)]
    + [f"SVC-F{n:03d}" for n in range(1, 8)]
    + [f"SVC-R{n:03d}" for n in range(20, 25)]
    + [f"SVC-F{n:03d}" for n in range(8, 12)]
    + ["SVC-R025"]
)
PUBLISHED_MAX = {"SVC-R": 25, "SVC-F": 11}


# Blocks handed to parallel work (issues 22..28): each is filled from its first number.
RESERVED_BLOCKS = {
    "SVC-R": [(26, 49), (50, 59), (60, 69), (70, 79), (80, 84), (85, 89), (90, 94)],
    "SVC-F": [(12, 14), (15, 19), (37, 39)],
}


def test_codes_are_contiguous_and_never_renumbered() -> None:
    codes = list(REGISTRY)
    assert codes[: len(PUBLISHED)] == PUBLISHED
    for family in {c[:5] for c in codes}:
        numbers = sorted(int(c[5:]) for c in codes if c.startswith(family))
        base = [n for n in numbers if n <= PUBLISHED_MAX[family]]
        assert base == list(range(1, len(base) + 1)), family
        for first, last in RESERVED_BLOCKS[family]:
            block = [n for n in numbers if first <= n <= last]
            assert block == list(range(first, first + len(block))), (family, first)
        assert all(
            n <= PUBLISHED_MAX[family] or any(a <= n <= b for a, b in RESERVED_BLOCKS[family])
            for n in numbers
        ), family
    assert all(re.fullmatch(r"SVC-[RF]\d{3}", c) for c in codes)


def test_readiness_codes_say_what_they_block() -> None:
    for entry in REGISTRY.values():
        if entry.code.startswith("SVC-R"):
            assert (entry.severity == "error") == (entry.klass is not None), entry.code


def test_docs_are_in_sync() -> None:
    assert (ROOT / "docs" / "diagnostics.md").read_text() == markdown_page(), (
        "regenerate: python -m svcc.contracts.diagnostics > docs/diagnostics.md"
    )
    printed = subprocess.run(
        [sys.executable, "-m", "svcc.contracts.diagnostics"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == markdown_page()


# Codes no single-file fixture can show, and the test that triggers each.
TRIGGERED_ELSEWHERE = {
    "SVC-F007": "tests/cli/test_cli.py::test_inspect_directory_json",
    "SVC-R024": "tests/frontends/test_repository.py::"
    "test_import_time_io_makes_importers_conditional_naming_file_and_line",
    "SVC-F008": "tests/frontends/test_repository.py::test_symlink_and_fifo_are_refused",
    "SVC-F009": "tests/frontends/test_repository.py::test_duplicate_module_names_are_refused",
    "SVC-F010": "tests/frontends/test_repository.py::test_oversize_file_is_refused",
    "SVC-F011": "tests/frontends/test_repository.py::"
    "test_configured_source_roots_hidden_and_build_folders",
    "SVC-R022": "tests/frontends/test_hostile_sources.py::"
    "test_governed_return_never_json_is_refused",
    "SVC-R054": "tests/runtime/test_types_governed.py::"
    "test_governed_refuses_parameters_that_need_objects",
    "SVC-F013": "tests/frontends/test_notebooks.py::test_name_with_spaces_is_derived_and_reported",
    "SVC-R039": "tests/compiler/test_effects.py::"
    "test_security_effect_refused_without_allow_and_served_with_it",
    "SVC-R040": "tests/compiler/test_requirements_names.py::"
    "test_unresolved_import_is_attributed_to_an_unmapped_distribution",
    "SVC-R041": "tests/frontends/test_source_roots.py::"
    "test_project_folders_are_roots_of_their_own_and_reported",
    "SVC-F015": "tests/backends/test_module_names.py::"
    "test_a_module_named_as_the_servers_own_is_refused",
    "SVC-R061": "tests/frontends/test_slices_and_unbound_names.py::"
    "test_a_read_of_a_name_nothing_binds_is_refused",
    "SVC-F037": "tests/frontends/test_directory_defaults.py::"
    "test_test_code_is_left_out_and_listed_once",
    "SVC-F038": "tests/frontends/test_cog_yaml.py::test_a_cog_directory_serves_its_predictor",
    "SVC-F039": "tests/frontends/test_setup_dependencies.py::"
    "test_setup_cfg_install_requires_is_declared",
}


def test_every_code_has_a_fixture_that_triggers_it() -> None:
    triggered: set[str] = set(TRIGGERED_ELSEWHERE)
    for case in cases():
        triggered |= {code for code, _, _ in expected_markers(case_input(case))}
        triggered |= set(case_options(case).get("expect", []))
    assert set(REGISTRY) - triggered == set()


# Codes with no before/after pair in docs/how-to/make-eligible.md (FIX_EXAMPLES), and why.
# Every other code must have one: a code added without its pair fails below.
NO_FIX_EXAMPLE = {
    # Records of what svcc did, not problems: there is no "after" to show.
    "SVC-R039": "an --allow opt-in recorded (the security-effect pair shows the opt-in)",
    "SVC-R040": "an import attributed to a declared distribution",
    "SVC-R041": "a source root found automatically",
    "SVC-F012": "notebook code left out of the served module",
    "SVC-F013": "a module name derived from a file name",
    "SVC-F037": "test code left out of a directory analysis",
    "SVC-F039": "where a directory's declared dependencies were read from",
    "SVC-F038": "the cog.yaml keys a Cog project's bundle honours (cog.md)",
    "SVC-R088": "a reminder of what unpickling imports: the fix is a requirement, not code",
    # The input is not a module the pair format can show (two whole Python modules).
    "SVC-F001": "a syntax error is an input error (exit 2) whose message is the parser's fix",
    "SVC-F002": "undecodable bytes cannot be written in the manual; --encoding names the codec",
    "SVC-F003": "an invalid notebook file (notebooks.md)",
    "SVC-F004": "a notebook's line magic, removed (notebooks.md)",
    "SVC-F005": "a notebook's cell magic, dropped (notebooks.md)",
    "SVC-F006": "a notebook's shell escape, removed (notebooks.md)",
    "SVC-F014": "a notebook's execution order (notebooks.md)",
    # A directory's layout, not a module's code (reference/repositories.md).
    "SVC-F007": "a file of a directory that cannot be read",
    "SVC-F008": "a repository entry refused (symlink, special file, bad [tool.svcc])",
    "SVC-F009": "two files claiming one module name",
    "SVC-F010": "a repository over a size limit",
    "SVC-F011": "a file that is not an importable module",
    # A name, not code: the fix is the other name the message asks for (--module-name).
    "SVC-F015": "a module named as the server's own, refused when compiling for a target",
}


def test_every_code_has_a_fix_example_or_says_why_not() -> None:
    from svcc.contracts.diagnostics.codes import FIX_EXAMPLES

    assert set(NO_FIX_EXAMPLE) <= set(REGISTRY)
    assert set(NO_FIX_EXAMPLE) & set(FIX_EXAMPLES) == set()
    assert set(REGISTRY) - set(FIX_EXAMPLES) - set(NO_FIX_EXAMPLE) == set()
    # every readiness code that can block a function has one
    blocking = {c for c, e in REGISTRY.items() if c.startswith("SVC-R") and e.klass is not None}
    assert blocking - set(FIX_EXAMPLES) == set()
