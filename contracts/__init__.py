"""What every layer may import, and which itself imports only the IR: the diagnostics
table, the error kinds, the target protocol, the execution policies (v1 and v2 behind
one loader), the reserved names, declared requirements and how a name is shown
(docs/layout.md)."""
