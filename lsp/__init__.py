"""``svcc lsp``: readiness in the editor, over the Language Server Protocol (stdio).

The pure parts (the project a document belongs to, the analysis of a buffer or a notebook,
diagnostics, hovers and code actions as data) never import pygls, so they are tested and
benchmarked directly; ``server`` is the only module that speaks the protocol. The analysis
is the library's own (``svcc.compiler.driver.analyze_source``, the passes ``svcc
inspect`` runs): an editor and the command line never disagree.
"""
