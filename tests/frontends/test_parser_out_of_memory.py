"""CPython's parser, out of memory, can fail without setting its ``MemoryError`` (3.11:
``SystemError: error return without exception set``). The front end judges it as the
memory error it is: a diagnostic here, and in the analysis service a 422 over the memory
budget (``tests/service/test_service_hostile.py``), never a 500."""

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import resource
    from svcc.compiler.driver import analyze_source
    from svcc.service.budget import _address_space

    source = "x = 1\\n" * 2_600_000
    start = _address_space()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    for mib in (250, 300, 350):  # where the memory runs out moves with the limit
        resource.setrlimit(resource.RLIMIT_AS, (start + mib * 1024 * 1024, hard))
        analysis = analyze_source(source, path="huge.py")
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        print(analysis.error.code if analysis.error else "none")
    """
)


def test_a_parser_out_of_memory_is_a_diagnostic_not_a_system_error() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["SVC-F001"] * 3, done.stdout
