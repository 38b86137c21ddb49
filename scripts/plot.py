#!/usr/bin/env python
"""Entry point of ``jamb-plot``: the tool is agents/cli/plot.py (``--help`` for its usage)."""
from agents.cli.plot import main

raise SystemExit(main())
