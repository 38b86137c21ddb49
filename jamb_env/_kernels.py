"""Compiled (numba) kernels of the batched env: the rules of jamb_env.rules.game and the
observation of jamb_env.observation, one game per loop iteration, over arrays.

They mirror the pure-Python reference line by line (and are tested step by step against
it); :class:`jamb_env.vector.JambVecEnv` packs a ruleset's tables into the arguments.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# indices into the int64 parameter vector P
(
    P_N,
    P_C,
    P_R,
    P_ROLLS,
    P_LAST_ROLLS,
    P_NUM_CELLS,
    P_ANSWER_COL,
    P_MANDATORY_COL,
    P_AFTER_ROW_COL,
    P_ANSWER_FORCED,
    P_NUM_HOLDS,
    P_ANN_OFFSET,
    P_WRITE_OFFSET,
    P_BONUS_THR,
    P_BONUS_PTS,
    P_BONUS_PER,
    P_BONUS_STRICT,
    P_ONES,
    P_MAX,
    P_MIN,
    P_HAS_MAXIMAL,
    P_UPPER_BITS,
    P_NUM_ACTIONS,
    P_KMAX,
    P_M,
    P_NUM_ANN,
) = range(26)
N_PARAMS = 26

# column codes (as jamb_env.rules.game)
FRONT, FREE, HAND, FREE2, ANNOUNCE, ANSWER, MANDATORY, AFTER_ROW = range(8)

# observation segment starts in the int64 vector S
(
    S_DICE,
    S_DICE_LEN,
    S_ROLL,
    S_ROLLS_LEFT,
    S_ANNOUNCED,
    S_ANSWER_DUE,
    S_ANSWER_LEN,
    S_FILLED,
    S_WRITTEN,
    S_VALUE_NOW,
    S_UPPER_SUM,
    S_UPPER_TO_BONUS,
    S_UPPER_LEFT,
    S_DIFFERENCE,
    S_PROGRESS,
    S_TURN,
    S_TURN_LEN,
) = range(17)
N_SEGMENTS = 17


@njit(cache=True)
def max_rolls_nb(turn, P):
    if P[P_NUM_CELLS] - turn == 1:
        return P[P_LAST_ROLLS]
    return P[P_ROLLS]


@njit(cache=True)
def writable_nb(filled_i, roll, announced, answer_due, P, codes, front_open, ann_cols, out):
    """Per column, the bitmask of rows writable after roll ``roll`` (game.writable_bits)."""
    C = P[P_C]
    R = P[P_R]
    full = (1 << R) - 1
    for c in range(C):
        out[c] = 0
    if announced >= 0:
        out[announced // R] = 1 << (announced % R)
        return
    if answer_due >= 0 and P[P_ANSWER_FORCED]:
        out[P[P_ANSWER_COL]] = 1 << answer_due
        return
    for c in range(C):
        f = filled_i[c]
        empty = full & ~f
        if empty == 0:
            continue
        code = codes[c]
        if code == FRONT:
            out[c] = front_open[c, f]
        elif code == FREE:
            out[c] = empty
        elif code == HAND:
            if roll == 1:
                out[c] = empty
        elif code == FREE2:
            if roll <= 2:
                out[c] = empty
        elif code == ANSWER:
            ann_full = True
            for a in ann_cols:
                if filled_i[a] != full:
                    ann_full = False
            if ann_full:
                out[c] = empty
            elif answer_due >= 0:
                out[c] = empty & (1 << answer_due)
        elif code == MANDATORY:
            ok = True
            for o in range(C):
                if o != c and o != P[P_AFTER_ROW_COL] and filled_i[o] != full:
                    ok = False
            if ok:
                out[c] = empty
        elif code == AFTER_ROW:
            everywhere = full
            for o in range(C):
                if o != c and o != P[P_MANDATORY_COL]:
                    everywhere &= filled_i[o]
            out[c] = empty & everywhere


@njit(cache=True)
def mask_nb(i, filled, dice_index, roll, announced, answer_due, turn, P, codes, front_open, ann_cols, ann_cells, hold_canonical, bits, masks):
    """Legal-action mask of game ``i`` into ``masks[i]`` (game.legal_mask)."""
    A = P[P_NUM_ACTIONS]
    for a in range(A):
        masks[i, a] = False
    r = roll[i]
    if r == 0 or turn[i] >= P[P_NUM_CELLS]:
        return
    C = P[P_C]
    R = P[P_R]
    forced = answer_due[i] >= 0 and P[P_ANSWER_FORCED] == 1
    if r < max_rolls_nb(turn[i], P):
        writable_nb(filled[i], r + 1, announced[i], answer_due[i], P, codes, front_open, ann_cols, bits)
        any_next = False
        for c in range(C):
            if bits[c] != 0:
                any_next = True
        if any_next:
            m = dice_index[i]
            for k in range(P[P_NUM_HOLDS]):
                masks[i, k] = hold_canonical[m, k]
    if r == 1 and announced[i] < 0 and not forced:
        ann_off = P[P_ANN_OFFSET]
        for j in range(P[P_NUM_ANN]):
            cell = ann_cells[j]
            c = cell // R
            if not (filled[i, c] >> (cell % R)) & 1:
                masks[i, ann_off + j] = True
    writable_nb(filled[i], r, announced[i], answer_due[i], P, codes, front_open, ann_cols, bits)
    off = P[P_WRITE_OFFSET]
    for c in range(C):
        b = bits[c]
        for rr in range(R):
            if (b >> rr) & 1:
                masks[i, off + c * R + rr] = True


@njit(cache=True)
def column_parts_nb(values_c, f, P, is_upper, out):
    """(upper, bonus, difference, lower) of one column into ``out`` (Ruleset.column_parts)."""
    R = P[P_R]
    upper = 0
    lower = 0
    for r in range(R):
        if is_upper[r]:
            upper += values_c[r]
        elif r != P[P_MAX] and r != P[P_MIN]:
            lower += values_c[r]
    bonus = 0
    ub = P[P_UPPER_BITS]
    if ub != 0 and (f & ub) == ub:
        over = upper - P[P_BONUS_THR]
        if over > 0 or (over == 0 and P[P_BONUS_STRICT] == 0):
            bonus = P[P_BONUS_PTS] + P[P_BONUS_PER] * over
    diff = 0
    if P[P_ONES] >= 0:
        db = (1 << P[P_ONES]) | (1 << P[P_MAX]) | (1 << P[P_MIN])
        if (f & db) == db:
            diff = values_c[P[P_ONES]] * (values_c[P[P_MAX]] - values_c[P[P_MIN]])
    out[0] = upper
    out[1] = bonus
    out[2] = diff
    out[3] = lower


@njit(cache=True)
def maximal_nb(values_i, filled_i, P, zeroing, min_row, vals_out):
    """The derived maximal column (game.maximal_column): values into ``vals_out``, filled bits returned."""
    C = P[P_C]
    R = P[P_R]
    f = 0
    for r in range(R):
        vals_out[r] = 0
        everywhere = True
        for c in range(C):
            if not (filled_i[c] >> r) & 1:
                everywhere = False
        if not everywhere:
            continue
        f |= 1 << r
        zero = False
        for c in range(C):
            if zeroing[c] and values_i[c, r] == 0:
                zero = True
        if zero:
            continue
        best = values_i[0, r]
        for c in range(1, C):
            v = values_i[c, r]
            if r == min_row:
                if v < best:
                    best = v
            elif v > best:
                best = v
        vals_out[r] = best
    return f


@njit(cache=True)
def total_points_nb(values_i, filled_i, col, P, is_upper, zeroing, min_row, parts, tmp_vals):
    """Points of column ``col`` plus the maximal column (the part of the score a write changes)."""
    column_parts_nb(values_i[col], filled_i[col], P, is_upper, parts)
    total = parts[0] + parts[1] + parts[2] + parts[3]
    if P[P_HAS_MAXIMAL]:
        f = maximal_nb(values_i, filled_i, P, zeroing, min_row, tmp_vals)
        column_parts_nb(tmp_vals, f, P, is_upper, parts)
        total += parts[0] + parts[1] + parts[2] + parts[3]
    return total


@njit(cache=True)
def set_dice_nb(i, faces, count, dice, dice_index, P, key_to_index):
    """Sort ``faces[:count]`` into ``dice[i]`` and look up the multiset index."""
    n = P[P_N]
    for a in range(1, count):  # insertion sort (n <= 6)
        x = faces[a]
        b = a - 1
        while b >= 0 and faces[b] > x:
            faces[b + 1] = faces[b]
            b -= 1
        faces[b + 1] = x
    key = 0
    for a in range(n):
        dice[i, a] = faces[a]
        p = 1
        for _ in range(faces[a] - 1):
            p *= n + 1
        key += p
    dice_index[i] = key_to_index[key]


@njit(cache=True)
def start_turn_nb(i, stream, pos, dice, dice_index, roll, P, key_to_index, faces):
    n = P[P_N]
    for a in range(n):
        faces[a] = stream[i, pos[i] + a]
    pos[i] += n
    set_dice_nb(i, faces, n, dice, dice_index, P, key_to_index)
    roll[i] = 1


@njit(cache=True)
def sheet_obs_nb(i, values, filled, answer_due, turn, P, S, row_max_cells, upper_rows, fconst, sheet):
    """The sheet features of game ``i`` into ``sheet[i]`` (ObservationEncoder.sheet_features)."""
    C = P[P_C]
    R = P[P_R]
    D = sheet.shape[1]
    for d in range(D):
        sheet[i, d] = 0.0
    if answer_due[i] >= 0 and S[S_ANSWER_LEN] > 0:
        sheet[i, S[S_ANSWER_DUE] + answer_due[i]] = 1.0
    upper_max = np.float32(fconst[0])
    threshold = np.float32(fconst[1])
    diff_max = np.float32(fconst[2])
    n_upper = len(upper_rows)
    s_filled = S[S_FILLED]
    s_written = S[S_WRITTEN]
    for c in range(C):
        f = filled[i, c]
        for r in range(R):
            cell = c * R + r
            if (f >> r) & 1:
                sheet[i, s_filled + cell] = 1.0
            sheet[i, s_written + cell] = np.float32(values[i, c, r]) / row_max_cells[cell]
        if n_upper > 0:
            up = 0
            nfilled = 0
            for q in upper_rows:
                up += values[i, c, q]
                if (f >> q) & 1:
                    nfilled += 1
            upf = np.float32(up)
            sheet[i, S[S_UPPER_SUM] + c] = upf / upper_max
            togo = threshold - upf
            if togo < 0:
                togo = np.float32(0.0)
            if togo > threshold:
                togo = threshold
            sheet[i, S[S_UPPER_TO_BONUS] + c] = togo / threshold
            sheet[i, S[S_UPPER_LEFT] + c] = np.float32(1.0 - nfilled / n_upper)
        if P[P_ONES] >= 0:
            o, mx, mn = P[P_ONES], P[P_MAX], P[P_MIN]
            if (f >> o) & 1 and (f >> mx) & 1 and (f >> mn) & 1:
                v = np.float32(values[i, c, o]) * (np.float32(values[i, c, mx]) - np.float32(values[i, c, mn]))
                sheet[i, S[S_DIFFERENCE] + c] = v / diff_max
    sheet[i, S[S_PROGRESS]] = np.float32(turn[i] / P[P_NUM_CELLS])


@njit(cache=True)
def obs_nb(i, dice_index, roll, announced, turn, P, S, sheet, dice_feat, value_now, turn_feat, ann_slot, masks, obs):
    """The observation of game ``i`` into ``obs[i]`` (ObservationEncoder.encode)."""
    D = obs.shape[1]
    for d in range(D):
        obs[i, d] = sheet[i, d]
    m = dice_index[i] if dice_index[i] >= 0 else P[P_M]
    s_dice = S[S_DICE]
    for d in range(S[S_DICE_LEN]):
        obs[i, s_dice + d] = dice_feat[m, d]
    r = roll[i]
    if r > 0:
        obs[i, S[S_ROLL] + r - 1] = 1.0
        K = P[P_KMAX]
        if K > 1:
            obs[i, S[S_ROLLS_LEFT]] = np.float32((max_rolls_nb(turn[i], P) - r) / (K - 1))
    if announced[i] >= 0:
        obs[i, S[S_ANNOUNCED] + ann_slot[announced[i]]] = 1.0
    if S[S_TURN_LEN] > 0:
        # v1 turn features on target cells (legal to write or to announce now)
        CR = P[P_NUM_CELLS]
        n = P[P_N]
        s_t = S[S_TURN]
        lt = 1 if max_rolls_nb(turn[i], P) != P[P_ROLLS] else 0
        for cell in range(CR):
            on = masks[i, P[P_WRITE_OFFSET] + cell]
            if not on and ann_slot[cell] >= 0:
                on = masks[i, P[P_ANN_OFFSET] + ann_slot[cell]]
            if on:
                obs[i, s_t + cell] = 1.0
                obs[i, s_t + CR + cell] = turn_feat[lt, r, m, cell]
                for b in range(n):
                    obs[i, s_t + 2 * CR + cell * n + b] = turn_feat[lt, r, m, CR + cell * n + b]
    if r > 0:
        CR = P[P_NUM_CELLS]
        s_filled = S[S_FILLED]
        s_now = S[S_VALUE_NOW]
        for cell in range(CR):
            if sheet[i, s_filled + cell] > 0:
                obs[i, s_now + cell] = 0.0
            else:
                obs[i, s_now + cell] = value_now[r - 1, m, cell]


@njit(cache=True)
def step_one_nb(
    i, actions, values, filled, dice, dice_index, roll, announced, answer_due, turn, score, stream, pos,
    P, S, codes, front_open, ann_cols, ann_cells, hold_canonical, key_to_index, cell_values,
    is_upper, zeroing, min_row, row_max_cells, upper_rows, fconst, dice_feat, value_now, turn_feat, ann_slot,
    rewards_pts, dones, masks, sheet, obs, parts_out, cols_out, bits, faces, parts, tmp_vals,
):
    """Apply game ``i``'s (legal) action; write its points, done flag, mask and observation.

    A finished game gets its final score parts in ``parts_out[i]`` (upper, bonus,
    difference, lower, bonus columns) and column totals in ``cols_out[i]``; its ``obs[i]``
    is the terminal observation (the caller resets it). ``bits``, ``faces``, ``parts`` and
    ``tmp_vals`` are scratch rows of this game.
    """
    R = P[P_R]
    n = P[P_N]
    a = actions[i]
    pts = 0
    dones[i] = False
    wrote = False
    if a < P[P_NUM_HOLDS]:
        k = 0
        for b in range(n):
            if (a >> b) & 1:
                faces[k] = dice[i, b]
                k += 1
        for b in range(n - k):
            faces[k + b] = stream[i, pos[i] + b]
        pos[i] += n - k
        set_dice_nb(i, faces, n, dice, dice_index, P, key_to_index)
        roll[i] += 1
    elif a < P[P_WRITE_OFFSET]:
        announced[i] = ann_cells[a - P[P_ANN_OFFSET]]
    else:
        cell = a - P[P_WRITE_OFFSET]
        c = cell // R
        r = cell % R
        before = total_points_nb(values[i], filled[i], c, P, is_upper, zeroing, min_row, parts, tmp_vals)
        values[i, c, r] = cell_values[roll[i] - 1, dice_index[i], cell]
        filled[i, c] |= 1 << r
        after = total_points_nb(values[i], filled[i], c, P, is_upper, zeroing, min_row, parts, tmp_vals)
        pts = after - before
        due = -1
        is_ann = False
        for q in ann_cols:
            if q == c:
                is_ann = True
        if is_ann and P[P_ANSWER_COL] >= 0 and not (filled[i, P[P_ANSWER_COL]] >> r) & 1:
            due = r
        answer_due[i] = due
        announced[i] = -1
        turn[i] += 1
        roll[i] = 0
        dice_index[i] = -1
        for b in range(n):
            dice[i, b] = 0
        wrote = True
        if turn[i] >= P[P_NUM_CELLS]:
            dones[i] = True
        else:
            start_turn_nb(i, stream, pos, dice, dice_index, roll, P, key_to_index, faces)
    score[i] += pts
    rewards_pts[i] = pts
    if wrote:
        sheet_obs_nb(i, values, filled, answer_due, turn, P, S, row_max_cells, upper_rows, fconst, sheet)
    mask_nb(i, filled, dice_index, roll, announced, answer_due, turn, P, codes, front_open, ann_cols, ann_cells, hold_canonical, bits, masks)
    obs_nb(i, dice_index, roll, announced, turn, P, S, sheet, dice_feat, value_now, turn_feat, ann_slot, masks, obs)
    if dones[i]:
        final_parts_nb(i, values, filled, P, is_upper, zeroing, min_row, parts, tmp_vals, parts_out, cols_out)


def _make_step(parallel: bool):
    loop = prange if parallel else range

    def step(
        actions, values, filled, dice, dice_index, roll, announced, answer_due, turn, score, stream, pos,
        P, S, codes, front_open, ann_cols, ann_cells, hold_canonical, key_to_index, cell_values,
        is_upper, zeroing, min_row, row_max_cells, upper_rows, fconst, dice_feat, value_now, turn_feat, ann_slot,
        rewards_pts, dones, masks, sheet, obs, parts_out, cols_out, bits_s, faces_s, parts_s, tmp_s,
    ):
        for i in loop(actions.shape[0]):
            step_one_nb(
                i, actions, values, filled, dice, dice_index, roll, announced, answer_due, turn, score, stream, pos,
                P, S, codes, front_open, ann_cols, ann_cells, hold_canonical, key_to_index, cell_values,
                is_upper, zeroing, min_row, row_max_cells, upper_rows, fconst, dice_feat, value_now, turn_feat, ann_slot,
                rewards_pts, dones, masks, sheet, obs, parts_out, cols_out, bits_s[i], faces_s[i], parts_s[i], tmp_s[i],
            )

    step.__name__ = step.__qualname__ = "step_parallel" if parallel else "step_serial"
    return njit(cache=True, parallel=parallel)(step)


#: Step every game (serial loop; the parallel one, over numba's threads, for many games).
step_serial = _make_step(False)
step_parallel = _make_step(True)


@njit(cache=True)
def final_parts_nb(i, values, filled, P, is_upper, zeroing, min_row, parts, tmp_vals, parts_out, cols_out):
    """Score parts (upper, bonus, difference, lower, bonus columns) and column totals of game ``i``."""
    C = P[P_C]
    for k in range(5):
        parts_out[i, k] = 0
    for c in range(C + 1):
        if c == C:
            if not P[P_HAS_MAXIMAL]:
                break
            f = maximal_nb(values[i], filled[i], P, zeroing, min_row, tmp_vals)
            column_parts_nb(tmp_vals, f, P, is_upper, parts)
        else:
            column_parts_nb(values[i, c], filled[i, c], P, is_upper, parts)
        for k in range(4):
            parts_out[i, k] += parts[k]
        if parts[1] > 0:
            parts_out[i, 4] += 1
        cols_out[i, c] = parts[0] + parts[1] + parts[2] + parts[3]


@njit(cache=True)
def reset_nb(
    idx, values, filled, dice, dice_index, roll, announced, answer_due, turn, score, stream, pos,
    P, S, codes, front_open, ann_cols, ann_cells, hold_canonical, key_to_index,
    row_max_cells, upper_rows, fconst, dice_feat, value_now, turn_feat, ann_slot, masks, sheet, obs,
):
    """New games in the slots ``idx`` (their streams already drawn): empty sheet, roll 1."""
    C = P[P_C]
    R = P[P_R]
    n = P[P_N]
    bits = np.zeros(C, dtype=np.int64)
    faces = np.zeros(n, dtype=np.int64)
    for i in idx:
        for c in range(C):
            filled[i, c] = 0
            for r in range(R):
                values[i, c, r] = 0
        announced[i] = -1
        answer_due[i] = -1
        turn[i] = 0
        score[i] = 0
        pos[i] = 0
        start_turn_nb(i, stream, pos, dice, dice_index, roll, P, key_to_index, faces)
        sheet_obs_nb(i, values, filled, answer_due, turn, P, S, row_max_cells, upper_rows, fconst, sheet)
        mask_nb(i, filled, dice_index, roll, announced, answer_due, turn, P, codes, front_open, ann_cols, ann_cells, hold_canonical, bits, masks)
        obs_nb(i, dice_index, roll, announced, turn, P, S, sheet, dice_feat, value_now, turn_feat, ann_slot, masks, obs)
