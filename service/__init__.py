"""The HTTP analysis service (Falcon). It calls ``svcc.compiler.driver``, never the CLI."""
