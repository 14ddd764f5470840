"""Built-in template: hosts (being written)."""
