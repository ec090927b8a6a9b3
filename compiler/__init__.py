"""The compiler proper: driver, pipeline, repository, passes, target registry and writer
(the contracts it shares are ``svcc.contracts``, the command line ``svcc.cli``:
docs/layout.md)."""
