#!/usr/bin/env python
"""Entry point of ``jamb-soak``: the tool is agents/apps/cli/soak.py (``--help`` for its usage)."""

from agents.apps.cli.soak import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
