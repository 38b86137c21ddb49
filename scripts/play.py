#!/usr/bin/env python
"""Entry point of ``jamb-play``: the tool is agents/cli/play.py (``--help`` for its usage)."""

from agents.cli.play import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
