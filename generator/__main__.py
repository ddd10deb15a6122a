"""``python -m ptxgen`` runs the command-line interface."""

from ptxgen.cli import main

raise SystemExit(main())
