"""Governed local-process execution, copied byte for byte into governed bundles as
``svc_runtime/governed/``: a subpackage, so it shares the runtime's modules by relative
import both here and in a bundle. ``executor`` runs in the server; ``template`` is the warm,
single-threaded process that forks one fresh worker per call. Only a forked worker ever
executes the user's source, once, for one call.
"""
