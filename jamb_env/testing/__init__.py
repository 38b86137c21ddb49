"""What a user runs to check a door: :func:`api_test` (a door's contract, Pgx / PettingZoo
style); :mod:`jamb_env.testing.invariants` (``jamb-soak``: the invariants over many random
games, needs the train extra)."""

from jamb_env.testing.api import DOORS, api_test

__all__ = ["DOORS", "api_test"]
