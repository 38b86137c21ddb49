#!/usr/bin/env python
"""Entry point of ``jamb-plot``: the tool is agents/apps/cli/plot.py (``--help`` for its usage)."""

from agents.apps.cli.plot import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
