"""Recaps: a transcript collapsed to one line per message or tool call (``collapse``), the ranked,
token-budgeted recap built from it (``build``, the pipeline: its records in ``model``, the chunks and
their summaries in ``chunks``, their ranking and budget in ``rank``, its text in ``render``), and its
delivery to the next session (``handoff``)."""
