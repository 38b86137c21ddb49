#!/usr/bin/env python
"""Entry point of ``jamb-bench``: the tool is agents/apps/cli/bench.py (``--help`` for its usage)."""

from agents.apps.cli.bench import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
