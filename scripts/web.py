#!/usr/bin/env python
"""Entry point of ``jamb-web``: the tool is agents/apps/cli/web.py (``--help`` for its usage)."""

from agents.apps.cli.web import main

if __name__ == "__main__":  # guarded: SubprocVecEnv workers may import this file
    raise SystemExit(main())
