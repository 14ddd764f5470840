"""Recaps: a transcript collapsed to one line per message or tool call (``collapse``), the ranked,
token-budgeted recap built from it (``build``), and its delivery to the next session (``handoff``)."""
