"""The HTTP analysis service (Falcon). It calls the compiler's library API
(``svcc.compiler.driver``, ``svcc.compiler.bundles``), never the CLI."""
