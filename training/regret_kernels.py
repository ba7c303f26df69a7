"""The compiled steps of sampled regret matching (:mod:`.sampled_regret`, whose learner calls
them; docs/training.md, "Sampled regret matching", numbers the steps): finding each
observation's row of the table, acting (regret matching, with the explorer's mix), the
explorers' probes, crediting each decision with the return still to come, and the update.
Apart from the learner, as the solvers keep their kernels apart, so that the learner's module
reads as the algorithm and this one as its loops. A Ctrl-C never lands here: the run reads
it between two steps of the batched env (:class:`~hiddenhand.training.run.Run`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def hash_observations(obs):  # pragma: no cover - compiled
    """A 64-bit hash of each row's float32 words: the row's table key. Each word is mixed
    into every bit (a multiply by an odd constant, then the high half folded into the low
    one), since observations are mostly the same two words (0.0 and 1.0, which differ only
    in bits 23 to 29): FNV-1a over whole words left the low 23 bits of every key alike, and
    9- and 10-card Goofspiel met two observations with one key (docs/training.md, "Sampled
    regret matching at 10 cards")."""
    bits = obs.view(np.uint32)
    keys = np.empty(obs.shape[0], dtype=np.uint64)
    for i in range(obs.shape[0]):
        h = np.uint64(14695981039346656037)
        for j in range(bits.shape[1]):
            h = (h ^ np.uint64(bits[i, j])) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(32)
        keys[i] = h
    return keys


@njit(cache=True)
def row_of(index, key, size):  # pragma: no cover - compiled
    """``key``'s row in ``index``, made the next row (``size``) if the key is new. Returns
    the row and the new number of rows."""
    if key in index:
        return index[key], size
    index[key] = size
    return size, size + 1


@njit(cache=True)
def find_rows(keys, masks, obs, index, legal, shown, size):  # pragma: no cover - compiled
    """Each observation's row, creating rows (legal actions and observation recorded) for
    new ones. A key whose row shows another observation (two observations with one hash)
    moves on to the next key of its sequence until it finds its own row or a free key, and
    ``keys`` is updated to the key used, so that what is derived from it (the round keys)
    is the observation's own. Returns the rows and the new number of rows."""
    rows = np.empty(len(keys), dtype=np.int64)
    for i in range(len(keys)):
        while True:
            r, grown = row_of(index, keys[i], size)
            if grown > size:
                legal[r] = masks[i] != 0
                shown[r] = obs[i]
                break
            if (shown[r] == obs[i]).all():
                break
            keys[i] = keys[i] * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
        rows[i], size = r, grown
    return rows, size


@njit(cache=True)
def find_round_rows(keys, index, size):  # pragma: no cover - compiled
    """Each round-state key's row in the table of round values (-1 where a step starts no
    round), creating rows for new keys. Returns the rows and the new number of rows."""
    rows = np.full(len(keys), -1, dtype=np.int64)
    for i in range(len(keys)):
        if keys[i] >= 0:
            rows[i], size = row_of(index, keys[i], size)
    return rows, size


@njit(cache=True)
def current_policy(regrets, predicted, legal, r, out):  # pragma: no cover - compiled
    """Predictive regret matching+'s policy of row ``r`` into ``out``: proportional to the
    positive part of the regrets plus the last advantages, uniform over the legal actions
    where none is positive."""
    total, count = 0.0, 0
    for x in range(out.shape[0]):
        z = regrets[r, x] + predicted[r, x]
        out[x] = z if legal[r, x] and z > 0.0 else 0.0
        total += out[x]
        count += legal[r, x]
    for x in range(out.shape[0]):
        out[x] = out[x] / total if total > 0.0 else (1.0 / count if legal[r, x] else 0.0)


@njit(cache=True)
def act(
    rows, players, probes, probing, exploration, regrets, predicted, legal, uniforms, actions, taken, role
):  # pragma: no cover - compiled
    """Each game's action: drawn from the row's policy, mixed at the explorer's decisions
    with ``exploration`` of uniform play, or (``probing``) uniform at its probe. ``taken``
    gets the probability the action was drawn with; ``role`` says what the decision is to
    the learner: 1 the explorer's (learnt from), 2 another seat's (credited: in a
    two-player zero-sum game its baselines learn from it), 0 when probing, before the
    probe (not used)."""
    explorer, probe, made = probes
    sigma = np.empty(regrets.shape[1])
    for i in range(len(rows)):
        r = rows[i]
        mine = players[i] == explorer[i]
        at = made[i]  # the explorer's decisions so far in this game
        current_policy(regrets, predicted, legal, r, sigma)
        if mine:
            share = (1.0 if at == probe[i] else 0.0) if probing else exploration
            count = 0
            for x in range(regrets.shape[1]):
                count += legal[r, x]
            for x in range(regrets.shape[1]):
                sigma[x] = (1.0 - share) * sigma[x] + share * legal[r, x] / count
            made[i] += 1
        left, chosen = uniforms[i], -1
        for x in range(len(sigma)):
            if sigma[x] > 0.0:
                chosen = x
                if left < sigma[x]:
                    break
                left -= sigma[x]
        actions[i] = chosen
        taken[i] = sigma[chosen]
        if not probing:
            role[i] = 1 if mine else 2
        else:
            role[i] = (1 if at >= probe[i] else 0) if mine else (2 if at > probe[i] else 0)


@njit(cache=True)
def restart_probes(ended, probes, seats, decisions, uniforms):  # pragma: no cover - compiled
    """Draw the explorer and the probe of the game that replaces each game that ended."""
    explorer, probe, made = probes
    for i in range(len(ended)):
        if ended[i]:
            explorer[i] = int(uniforms[i, 0] * seats)
            probe[i] = int(uniforms[i, 1] * decisions)
            made[i] = 0


@njit(cache=True)
def credit(length, steps, table, rounds, weight, zero_sum, credit):  # pragma: no cover - compiled
    """Step 2 of the algorithm (``docs/training.md``) for the first ``length`` steps: ``credit`` gets, for
    every decision with a role whose game ended within them, the sampled return still to
    come after its action, in the decider's terms. Where a step credited now starts a round
    (its round row >= 0, ``bootstrap``), the explorer's estimate of the return to come from
    there moves that round-state's value to the explorer (a running mean weighted by
    ``weight``, the iteration; in a two-player zero-sum game the other seat's too), which
    then stands in for it. Returns the first step from which some game is still under way
    (what to keep for the next collection)."""
    rows, actions, taken, players, explorers, role, banked, ended, rewards, round_rows = steps
    regrets, predicted, legal, baseline = table
    values, weights = rounds
    sigma = np.empty(regrets.shape[1])
    keep = length
    for i in range(rows.shape[1]):
        last, live = -1, False
        after, settled = 0.0, 0.0  # the explorer's estimated return after a step, and banked there
        for t in range(length - 1, -1, -1):
            e = explorers[t, i]
            if ended[t, i]:
                live = True
                if last < 0:
                    last = t
                after, settled = 0.0, rewards[t, i, e]
            elif live and round_rows[t + 1, i] >= 0 and role[t + 1, i] != 0:  # on into a new round
                k = round_rows[t + 1, i]
                for q in range(values.shape[1]):
                    if q == e or zero_sum:  # in a two-player zero-sum game the other seat's is the opposite
                        weights[k, q] += weight
                        values[k, q] += weight / weights[k, q] * ((after if q == e else -after) - values[k, q])
                after = values[k, e]
            if not live or role[t, i] == 0:
                continue
            here = banked[t, i, e]
            sample = after + settled - here  # the explorer's return to come after this action
            p, r, a = players[t, i], rows[t, i], actions[t, i]
            sign = 1.0 if p == e else -1.0
            credit[t, i] = sign * sample
            if p == e or zero_sum:
                current_policy(regrets, predicted, legal, r, sigma)
                value = 0.0
                for x in range(len(sigma)):
                    if sigma[x] > 0.0:
                        base = sign * baseline[r, x]
                        value += sigma[x] * (base + ((sample - base) / taken[t, i] if x == a else 0.0))
                after = value
            else:
                after = sample
            settled = here
        keep = min(keep, last + 1)
    return keep


@njit(cache=True)
def learn(length, steps, credit, table, count, least, rate, zero_sum, foresight, floor):  # pragma: no cover - compiled
    """Steps 3 and 4 of the algorithm (``docs/training.md``) for the credited decisions of the first
    ``length`` steps (their role then set to 0: done). The estimates are summed per row
    first (every policy is read before any regret changes); each touched row then takes
    their mean. Returns the number of decisions the regrets learnt from."""
    rows, actions, taken, players, explorers, role = steps[:6]
    regrets, predicted, legal, baseline, seen, average, delta, hits, touched, updates = table
    sigma = np.empty(regrets.shape[1])
    learnt = 0
    for t in range(length):
        for i in range(rows.shape[1]):
            kind = role[t, i]
            if kind == 0 or np.isnan(credit[t, i]):
                continue
            role[t, i] = 0
            r, a, g = rows[t, i], actions[t, i], credit[t, i]
            if kind == 1:
                learnt += 1
                current_policy(regrets, predicted, legal, r, sigma)
                surprise = (g - baseline[r, a]) / taken[t, i]
                value = sigma[a] * surprise
                for x in range(len(sigma)):
                    value += sigma[x] * baseline[r, x]
                if hits[r] == 0:
                    touched[count] = r
                    count += 1
                hits[r] += 1
                for x in range(len(sigma)):
                    if legal[r, x]:
                        delta[r, x] += baseline[r, x] + (surprise if x == a else 0.0) - value
            if kind == 1 or zero_sum:
                seen[r, a] += 1
                baseline[r, a] += max(1.0 / seen[r, a], rate) * (g - baseline[r, a])
    waiting = 0
    for k in range(count):
        r = touched[k]
        if hits[r] < least:
            touched[waiting] = r
            waiting += 1
            continue
        updates[r] += 1
        current_policy(regrets, predicted, legal, r, sigma)
        for x in range(regrets.shape[1]):
            average[r, x] += updates[r] * sigma[x]
            mean = delta[r, x] / hits[r]
            regrets[r, x] = max(regrets[r, x] + mean, floor) if legal[r, x] else 0.0
            predicted[r, x] = foresight * mean if legal[r, x] else 0.0
            delta[r, x] = 0.0
        hits[r] = 0
    return learnt, waiting
