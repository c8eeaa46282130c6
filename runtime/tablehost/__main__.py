"""``python -m tablehost`` runs the ``tablehost`` command."""

from tablehost.cli import main

raise SystemExit(main())
