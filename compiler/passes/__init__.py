"""Named passes over the IR, one per module; ``compiler.driver`` runs readiness, then select."""
