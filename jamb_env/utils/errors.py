"""Exceptions raised by the rules engine and the environment, and the illegal-action warning."""

from __future__ import annotations


class RulesetError(ValueError):
    """A ruleset is unknown, malformed or invalid (RULES.md §5).

    The message names the file, the key and what is allowed.
    """


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (env ``illegal_action="raise"``).

    The message names the action and why it is illegal; the state is left unchanged.
    """


#: Where the illegal-action warning sends its reader: docs/tools.md, the section on tools
#: that sample without the legal-action mask.
UNMASKED_DOC = "docs/tools.md#tools-that-do-not-mask-cleanrls-scripts-sb3s-plain-ppo-evaluate_policy"

#: What an illegal action in "terminate" mode means and how to pass masks (the end of the
#: :class:`IllegalActionWarning` message; the envs put what happened before it).
UNMASKED_HINT = (
    "so this episode's return is a penalty, not a game score. Was the action sampled without the legal-action "
    "mask (CleanRL's scripts, SB3's PPO, SB3's evaluate_policy do that)? Give the mask to the policy "
    "(env.action_masks() or info['action_mask']: sb3-contrib's MaskablePPO and its own evaluate_policy), "
    "or wrap the env in jamb_env.wrappers.LegalActions for a tool that cannot mask; see "
    + UNMASKED_DOC
    + ". Warned once per env; warnings.simplefilter('error', jamb_env.IllegalActionWarning) makes it an error"
)


class IllegalActionWarning(UserWarning):
    """An illegal action ended a game in ``illegal_action="terminate"`` mode (once per env).

    The message names the action, why it is illegal, the penalty, and how to pass masks
    (:data:`UNMASKED_HINT`); ``warnings.simplefilter("error", IllegalActionWarning)`` turns
    it into an exception.
    """
