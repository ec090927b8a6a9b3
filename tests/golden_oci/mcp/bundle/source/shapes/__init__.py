"""Geometry helpers in a package: the OCI tests' repository."""
