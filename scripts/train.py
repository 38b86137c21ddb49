#!/usr/bin/env python
"""Entry point of ``jamb-train``: the tool is agents/cli/train.py (``--help`` for its usage)."""
from agents.cli.train import main

raise SystemExit(main())
