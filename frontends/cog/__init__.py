"""Cog predictors read as they are written: ``cog.Input(...)`` descriptors (``inputs``)."""
