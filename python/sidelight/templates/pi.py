"""Built-in template: pi (being written)."""
