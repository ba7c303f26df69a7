"""A network over the canonical observation (hiddenhand.agents.canonical_mlp): positions that
are the same game with the cards renamed get one policy (checked on positions written out by
hand), its weights are an mlp's, and a saved agent keeps what it reads."""

import numpy as np
import pytest
import torch

from hiddenhand.agents.network import Member, NetworkAgent, mlp, network
from hiddenhand.envs.goofspiel_observation import position_observations
from hiddenhand.registry import get


def _bits(*cards: int) -> int:
    """A bitmask of cards, numbered from 1 as the game numbers them."""
    return sum(1 << (c - 1) for c in cards)


def _agent(rules, view: str, seed: int = 0) -> NetworkAgent:
    size = 4 * rules.num_cards  # the two-player Markov observation: prize, two hands, prizes to come
    torch.manual_seed(seed)
    weights = mlp(size, (32, 32), rules.num_cards).state_dict()
    return NetworkAgent(
        "goofspiel", rules.params, "test", size, (32, 32), rules.num_cards, [Member("logits", 1.0, weights)], view=view
    )


def test_renamed_positions_get_one_policy_renamed():
    """Five cards, two rounds left, the same prizes (5 to come, 4 on the table). I hold 1 and
    3 against 2 and 4 in one position, 2 and 4 against 3 and 5 in the other: the bids' order
    is the same (mine below theirs, twice), so the game is the same with the cards renamed
    1->2, 3->4, and the canonical network plays 2 and 4 there as it plays 1 and 3 here. The
    network over the observation itself tells them apart."""
    rules = get("goofspiel").rules(num_cards=5, observation="markov")
    mine, theirs = np.array([_bits(1, 3), _bits(2, 4)]), np.array([_bits(2, 4), _bits(3, 5)])
    shown = position_observations(rules, mine, theirs, np.array([_bits(5)] * 2), np.array([3, 3]), 0)
    canonical = _agent(rules, "canonical").policy_batch(shown)
    assert canonical[0, [0, 2]] == pytest.approx(canonical[1, [1, 3]], abs=1e-12)
    assert canonical[0, [0, 2]].sum() == pytest.approx(1.0) and canonical[1, [1, 3]].sum() == pytest.approx(1.0)
    plain = _agent(rules, "observation").policy_batch(shown)
    assert abs(plain[0, 0] - plain[1, 1]) > 1e-6


def test_its_weights_are_an_mlp_s_and_on_a_canonical_position_it_is_that_mlp():
    """The same parameter names as :func:`mlp`, so one state dict serves both; on a position
    whose held cards are already the lowest (1 and 2 against 3 and 4 of 4 cards: nothing to
    rename) both give the same outputs at the held cards."""
    rules = get("goofspiel").rules(num_cards=4, observation="markov")
    shown = position_observations(
        rules, np.array([_bits(1, 2)]), np.array([_bits(3, 4)]), np.array([_bits(4)]), np.array([2]), 0
    )
    torch.manual_seed(1)
    plain = mlp(shown["observation"].shape[1], (16,), 4)
    canonical = network(shown["observation"].shape[1], (16,), 4, rules)
    assert list(canonical.state_dict()) == list(plain.state_dict())
    canonical.load_state_dict(plain.state_dict())
    x = torch.as_tensor(shown["observation"])
    assert torch.allclose(canonical(x)[:, :4], plain(x)[:, :4])


def test_a_saved_canonical_agent_reads_back_as_one_and_games_without_the_view_refuse_it(tmp_path):
    rules = get("goofspiel").rules(num_cards=4, observation="markov")
    agent = _agent(rules, "canonical")
    agent.save(tmp_path)
    back = NetworkAgent.load(tmp_path)
    shown = position_observations(
        rules, np.array([_bits(2, 4)]), np.array([_bits(1, 3)]), np.array([_bits(1)]), np.array([2]), 1
    )
    assert back.view == "canonical" and np.allclose(back.policy_batch(shown), agent.policy_batch(shown))
    with pytest.raises(ValueError, match="view 'sorted' is not one of observation, canonical"):
        _agent(rules, "sorted")
    full = get("goofspiel").rules(num_cards=4)
    with pytest.raises(ValueError, match="declares no canonical observation"):
        NetworkAgent("goofspiel", full.params, "x", 8, (4,), 4, [Member("uniform", 1.0)], view="canonical")


def test_a_batch_runs_its_layers_once_per_canonical_position():
    """The two renamed positions of the first test and a copy of the first are one canonical
    position: the layers see one row, and every row still gets the outputs it gets alone,
    renamed to its own cards; gradients flow back through the shared row."""
    rules = get("goofspiel").rules(num_cards=5, observation="markov")
    mine, theirs = np.array([_bits(1, 3), _bits(2, 4), _bits(1, 3)]), np.array([_bits(2, 4), _bits(3, 5), _bits(2, 4)])
    shown = position_observations(rules, mine, theirs, np.array([_bits(5)] * 3), np.array([3, 3, 3]), 0)
    x = torch.as_tensor(shown["observation"])
    torch.manual_seed(2)
    net = network(x.shape[1], (16,), 5, rules)
    seen = []
    net[0].register_forward_hook(lambda module, inputs, output: seen.append(len(inputs[0])))
    together = net(x)
    assert seen == [1]
    alone = torch.cat([net(x[i : i + 1]) for i in range(3)])
    assert torch.allclose(together, alone)
    assert torch.allclose(together[0, [0, 2]], together[1, [1, 3]]) and torch.allclose(together[0], together[2])
    together[:, 0].sum().backward()
    first = next(net.parameters())
    assert first.grad is not None and first.grad.abs().sum() > 0
