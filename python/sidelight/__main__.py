"""``python -m sidelight``: the same as the ``sidelight`` command."""

from sidelight.cli import main

raise SystemExit(main())
