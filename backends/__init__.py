"""Back ends (targets): one package each, turning IR into a ``FileTree`` with no I/O."""
