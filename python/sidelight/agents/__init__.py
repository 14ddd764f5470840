"""The built-in agents, one folder each: everything sidelight knows about one agent lives in its folder.

Each agent registers through the same hooks a third-party plugin uses; only the plugin manager loads
an agent's module, by name.
"""
