#!/usr/bin/env python
"""Entry point of ``jamb-train-value``: the tool is agents/apps/cli/train_value.py (``--help`` for its usage)."""

from agents.apps.cli.train_value import main

if __name__ == "__main__":
    raise SystemExit(main())
