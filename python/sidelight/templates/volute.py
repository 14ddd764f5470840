"""Built-in template: volute (being written)."""
