"""``python -m shapecheck``: the same as the ``shapecheck`` command."""

from shapecheck.frontends.cli import main

raise SystemExit(main())
