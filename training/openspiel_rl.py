"""OpenSpiel's reinforcement-learning environment over our games, as the OpenSpiel learners
(:mod:`.nfsp`, :mod:`.psro`) use it, and the checks they share.

Both learners run OpenSpiel's own code (PyTorch and NumPy; no TensorFlow, no JAX) on
``open_spiel.python.rl_environment.Environment`` over ``pyspiel.load_game("hiddenhand_<game>",
params)``, with ``observation_type=OBSERVATION``: the agents read the observation tensor,
which for ``observation="markov"`` (Goofspiel, Spoof, Bid Spoof) is the position and
nothing of how it was reached. The agents they produce are saved as
:class:`~hiddenhand.agents.network.NetworkAgent` (the networks read that same vector), which
then declare themselves Markov, so the game's exact exploitability measure applies to them
(``hiddenhand.games()[game].exact_exploitability``), as to the self-play learners of
:mod:`.policy_gradient`.

**One policy for every seat.** A hiddenhand agent plays every seat with one policy of the
observation, and the measures evaluate it so. Our observations are seat-relative (Goofspiel's
Markov vector is "my hand, the other's hand, the prizes"; Spoof's carries the seat), so
both learners share one policy between the seats, as our self-play learners do.
"""

from __future__ import annotations

from hiddenhand.core import check_rules
from hiddenhand.devices import DEVICES
from hiddenhand.registry import game_of, get
from hiddenhand.validation import check_choice, check_int


def prepare(rules, steps: int, eval_every: int, device: str, who: str):
    """Torch on one thread, and the run's arguments checked: ``(declared game, steps,
    eval_every)``. OpenSpiel's PyTorch learners keep their networks on the CPU (they take no
    device), so ``device`` may be ``auto`` or ``cpu`` only."""
    import torch

    torch.set_num_threads(1)
    declared = game_of(check_rules(rules, who))
    if check_choice("device", device, DEVICES) != "auto" and device != "cpu":
        raise ValueError(
            f"device={device!r} is not allowed for {who}: OpenSpiel's learner runs on the CPU; allowed: auto, cpu"
        )
    steps = check_int("steps", steps, 1, 10**10)
    eval_every = check_int("eval_every", eval_every, 1, 10**10)
    return declared, steps, eval_every


def environment(rules, seed: int):
    """OpenSpiel's RL environment over ``rules``' game, loaded through the adapter by name,
    reading observation tensors, with chance seeded."""
    import pyspiel
    from open_spiel.python import rl_environment

    game = pyspiel.load_game(get(rules.name).openspiel_name, rules.to_openspiel())
    return rl_environment.Environment(
        game,
        observation_type=rl_environment.ObservationType.OBSERVATION,
        chance_event_sampler=rl_environment.ChanceEventSampler(seed=seed),
    )


def copy_state(module) -> dict:
    """A detached copy of a torch module's weights (what a saved agent keeps)."""
    return {key: value.detach().clone() for key, value in module.state_dict().items()}


def check_learn_every(learn_every: int) -> None:
    """OpenSpiel's PyTorch DQN learns before it stores its first transition when
    ``learn_every`` is 1 or 2 (its buffer does not exist yet: a ``TypeError`` deep inside)."""
    if check_int("learn_every", learn_every, 1, 10**9) < 3:
        raise ValueError(
            f"learn_every={learn_every} is too small: OpenSpiel's PyTorch DQN would learn before it has stored a "
            "transition; allowed: 3 or more"
        )


__all__ = ["check_learn_every", "copy_state", "environment", "prepare"]
