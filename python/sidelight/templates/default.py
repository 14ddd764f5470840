"""Built-in template: default (being written)."""
