#!/usr/bin/env python
"""Entry point of ``jamb-train-selfplay``: the tool is agents/apps/cli/train_selfplay.py (``--help`` for its usage)."""

from agents.apps.cli.train_selfplay import main

if __name__ == "__main__":
    raise SystemExit(main())
