"""The compiler proper: driver, passes, diagnostics, target registry, writer and CLI."""
