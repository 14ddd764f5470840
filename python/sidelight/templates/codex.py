"""Built-in template: codex (being written)."""
