"""Built-in template: claude_code (being written)."""
