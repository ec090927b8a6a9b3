"""A small shop, served by svcc: see examples/ship.sh."""
