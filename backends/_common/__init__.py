"""What the REST and MCP back ends share: the JSON Schema lowering, bundle assembly, templates."""
