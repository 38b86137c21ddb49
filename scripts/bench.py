#!/usr/bin/env python
"""Entry point of ``jamb-bench``: the tool is agents/cli/bench.py (``--help`` for its usage)."""
from agents.cli.bench import main

raise SystemExit(main())
