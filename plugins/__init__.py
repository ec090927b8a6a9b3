"""Installable extensions: offline, hash-checked installs into one isolated environment each,
explicit activation, and a one-request/one-response invocation in a fresh process."""
