"""The features layer: what sidelight makes of the sessions it reads.

The digest, the reader, history and facts, the lifecycle and the welcome back, recaps and the handoff,
fleets, and ``hook``, the one composer of what a host event gets from them. Modules here import the
engine and the contract, never an entry point (the watcher, the agents, the templates) or the command
line (``make lint``).
"""
