"""The engine layer: finding sessions and reading their transcripts from cursors.

``scanning`` is the typed facade of the native core, ``paths`` the small reads of transcripts' heads and
the session records resolvers share, ``discovery`` finds sessions (the current one, its siblings, a name
resolved) and ``reads`` is the one reading engine the digest, the watcher and the dashboard read through.
Modules here import the contract (the package's top-level modules, ``install``, ``_fast``) and each
other, never a feature or an entry point (``make lint``).
"""
