"""Built-in templates: sidelight's own plugins for the agents it ships with.

They register through the same hooks as third-party plugins (see :mod:`sidelight.hookspecs`).
"""
