#!/usr/bin/env python
"""``jamb-train --engine rllib`` (agents/apps/cli/train.py and agents/apps/cli/train_rllib.py;
``--help`` for the usage)."""

import sys

from agents.apps.cli.train import main

if __name__ == "__main__":  # guarded: worker processes may import this file
    raise SystemExit(main(["--engine", "rllib", *sys.argv[1:]]))
