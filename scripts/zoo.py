#!/usr/bin/env python
"""Entry point of ``jamb-zoo``: the tool is agents/apps/cli/zoo.py (``--help`` for its usage)."""

from agents.apps.cli.zoo import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
