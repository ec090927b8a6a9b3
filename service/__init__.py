"""The HTTP analysis service (Falcon). It calls the compiler's library API
(``svcc.compiler.analysis``, ``svcc.compiler.bundles``), never the CLI."""
