"""The readers of a parsed module, one kind of fact each (see ``_lower.ModuleLowerer``)."""
