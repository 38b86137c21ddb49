"""Exceptions raised by the rules engine and the environment."""

from __future__ import annotations


class RulesetError(ValueError):
    """A ruleset is unknown, malformed or invalid (RULES.md §5).

    The message names the file, the key and what is allowed.
    """


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (env ``illegal_action="raise"``).

    The message names the action and why it is illegal; the state is left unchanged.
    """
