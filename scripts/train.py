#!/usr/bin/env python
"""Entry point of ``jamb-train``: the tool is agents/apps/cli/train.py (``--help`` for its usage)."""

from agents.apps.cli.train import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
