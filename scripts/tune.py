#!/usr/bin/env python
"""Entry point of ``jamb-tune``: the tool is agents/apps/cli/tune.py (``--help`` for its usage)."""

from agents.apps.cli.tune import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
