"""The bundle skeleton, public for every servable target, built in or plug-in.

:func:`assemble` turns a target's own files (its glue, its interface document) and the
``EmitContext`` it was given into a whole bundle: the program's sources, the analysis
documents, the runtime modules its ``BundleSpec`` names, governed files when the context
carries an execution policy, and the manifest over all of them, laid out as the program's
layout says (a file's or a repository's, DESIGN §12). A target that uses it needs no branch
on the kind of input, and its bundles are images' and Kubernetes' inputs as they stand.
"""

from svcc.backends._common.bundle import assemble, pretty_json

__all__ = ["assemble", "pretty_json"]
