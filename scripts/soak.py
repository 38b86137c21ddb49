#!/usr/bin/env python
"""Entry point of ``jamb-soak``: the tool is agents/cli/soak.py (``--help`` for its usage)."""
from agents.cli.soak import main

raise SystemExit(main())
