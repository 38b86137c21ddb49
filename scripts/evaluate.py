#!/usr/bin/env python
"""Entry point of ``jamb-evaluate``: the tool is agents/apps/cli/evaluate.py (``--help`` for its usage)."""

from agents.apps.cli.evaluate import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
