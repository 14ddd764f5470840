"""``sidelight dashboard``: a local web page of every session (the ``dashboard`` extra: Starlette,
uvicorn, Jinja2). :mod:`.data` makes what it shows from what the commands read, :mod:`.app` serves it
(pages, JSON, live events, the token and origin checks), :mod:`.server` runs it; docs/dashboard.md.

Importing this package imports nothing else: ``sidelight`` works without the extra."""
