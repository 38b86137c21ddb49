#!/usr/bin/env python
"""Entry point of ``jamb-evaluate``: the tool is agents/cli/evaluate.py (``--help`` for its usage)."""
from agents.cli.evaluate import main

raise SystemExit(main())
