#!/usr/bin/env python
"""Entry point of ``jamb-export``: the tool is agents/apps/cli/export.py (``--help`` for its usage)."""

from agents.apps.cli.export import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
