"""Governed OCI-container execution (policy ``svc.execution/v2``), copied byte for byte into
OCI-governed bundles as ``svc_runtime/container/``. ``executor`` runs in the server and
drives the container engine over its Unix socket; ``worker`` is the program the runtime
image runs, once per container, for one call (it is copied into the image's build context,
never imported by the server).
"""
