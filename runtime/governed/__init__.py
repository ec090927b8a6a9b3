"""Governed local-process execution, copied byte for byte into governed bundles as
``svc_governed/``. ``executor`` runs in the server; ``template`` is the warm, single-threaded
process that forks one fresh worker per call. Neither imports the user's source in the
server or the template: only a forked worker executes it, once, for one call.
"""
