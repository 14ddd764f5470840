"""Fleets across machines: the Redis Streams publisher and reader of remote siblings (``streams``) over a
small RESP client (``resp``); docs/fleet.md."""
