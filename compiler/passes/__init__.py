"""Named passes over the IR: every module runs ``module_passes.PASSES`` (verify, readiness) on
every path (a file, a notebook, a repository's modules), then one selection runs over every
module's assessments (``select``)."""
