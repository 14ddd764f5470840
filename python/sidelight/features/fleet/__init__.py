"""Fleets across machines: the Redis Streams publisher and reader of remote siblings (``streams``), whose
hooks read the stream with the cold-start kit's small RESP client (:mod:`sidelight._fast.resp`);
docs/fleet.md."""
