#!/usr/bin/env python
"""``jamb-train --engine rllib`` (agents/cli/train.py and agents/cli/train_rllib.py; ``--help`` for the usage)."""

import sys

from agents.cli.train import main

if __name__ == "__main__":  # guarded: worker processes may import this file
    raise SystemExit(main(["--engine", "rllib", *sys.argv[1:]]))
