#!/usr/bin/env python
"""Entry point of ``jamb-play``: the tool is agents/apps/cli/play.py (``--help`` for its usage)."""

from agents.apps.cli.play import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
