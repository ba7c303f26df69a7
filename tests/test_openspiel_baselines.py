"""OpenSpiel's NFSP and PSRO on our games through the adapter
(hiddenhand.training.nfsp, hiddenhand.training.psro): each trains end to end on a tiny budget, with
an exact exploitability curve, saves an agent that reloads and acts identically, plays
only legal moves, and loads wherever a saved agent does. Plus the saved network agent
(hiddenhand.agents.network) on its own."""

import json
from dataclasses import replace

import numpy as np
import pytest

import hiddenhand
from hiddenhand.agents import NetworkAgent, load_agent
from hiddenhand.agents.network import Member, is_network_dir, mlp
from hiddenhand.core import CHANCE, sample_chance
from hiddenhand.registry import get
from hiddenhand.training.nfsp import NFSP_OURS, train_nfsp
from hiddenhand.training.openspiel_rl import environment
from hiddenhand.training.psro import PSRO_OURS, train_psro
from hiddenhand.training.psro_population import mixture_measure, play_out

GOOFSPIEL = ("goofspiel", {"num_cards": 4, "observation": "markov"})
SPOOF = ("spoof", {"matches": 2, "objective": "round", "observation": "markov"})

TINY_NFSP = replace(NFSP_OURS, min_buffer_size_to_learn=64, batch_size=32, learn_every=16)
TINY_PSRO = replace(
    PSRO_OURS, episodes_per_oracle=60, sims_per_entry=16, prd_iterations=2000, min_buffer_size_to_learn=64
)


def observations(game, params, games=40, seed=0):
    """Every decision's observation in ``games`` games of random play, as one batch."""
    rules = hiddenhand.games()[game].rules(**params)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(games):
        state = rules.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply(sample_chance(state, rng))
                continue
            seen = state.agent_observation(state.current_player())
            rows.append((np.asarray(seen["observation"], np.float32), np.asarray(seen["action_mask"])))
            state.apply(int(rng.choice(state.legal_actions())))
    vectors, masks = zip(*rows)
    return {"observation": np.stack(vectors), "action_mask": np.stack(masks)}


def check_saved_run(out, game, params, curve):
    """Files written; the saved agent reloads (directly and through ``load_agent``), is
    Markov, acts only legally, row by row as in one batch, identically after reloading,
    and is exactly as exploitable as the curve's last point says."""
    for name in ("curve.csv", "curve.png", "run.json", "agent.json", "network.pt"):
        assert (out / name).stat().st_size > 0
    assert curve[0].steps <= curve[-1].steps and curve[-1].steps >= 1
    assert all(isinstance(p.exploitability, float) for p in curve)
    assert is_network_dir(out)
    agent = NetworkAgent.load(out)
    again = load_agent(game, str(out), params)
    assert isinstance(again, NetworkAgent) and not agent.uses_score and not agent.uses_history
    batch = observations(game, params)
    probs = agent.policy_batch(batch)
    assert np.array_equal(probs, again.policy_batch(batch))
    assert np.all(probs[batch["action_mask"] == 0] == 0)
    assert np.allclose(probs.sum(axis=1), 1.0)
    rows = [agent.policy({key: value[i] for key, value in batch.items()}) for i in range(0, len(probs), 7)]
    assert np.allclose(rows, probs[::7], atol=1e-12)
    declared = hiddenhand.games()[game]
    figure = declared.exact_exploitability(declared.rules(**params), again)
    assert figure == pytest.approx(curve[-1].exploitability, abs=1e-9)
    return json.loads((out / "run.json").read_text())


def test_nfsp_learns_goofspiel_and_saves_what_it_measured(tmp_path):
    """15,000 decisions of NFSP with our settings take 4-card Goofspiel's exploitability from
    uniform play's 2.5 to 1.31 with this seed (1.31 to 2.01 over seeds 0-4; 1.05-1.35 from
    100,000 decisions); the test asks for less than 2.2. Untrained, the network is within
    0.1 of uniform play's figure (2.48 with this seed)."""
    game, params = GOOFSPIEL
    curve = train_nfsp(get(game).rules(**params), steps=15_000, out=tmp_path, seed=3, eval_every=7500, progress=False)
    assert [p.steps for p in curve][:2] == [0, 7500] and curve[-1].steps >= 15_000
    rules = hiddenhand.games()[game].rules(**params)
    uniform = hiddenhand.games()[game].exact_exploitability(rules, load_agent(game, "random"))
    assert uniform == pytest.approx(2.5)
    assert curve[0].exploitability == pytest.approx(uniform, abs=0.1)  # an untrained network plays about uniformly
    assert curve[-1].exploitability < 2.2
    record = check_saved_run(tmp_path, game, params, curve)
    assert record["learner"] == "NFSP" and record["games"] > 0 and record["settings"]["anticipatory_param"] == 0.3
    assert NetworkAgent.load(tmp_path).kind == "nfsp"


def test_nfsp_on_a_spoof_round(tmp_path):
    game, params = SPOOF
    curve = train_nfsp(
        get(game).rules(**params), steps=1500, out=tmp_path, seed=1, eval_every=700, settings=TINY_NFSP, progress=False
    )
    assert [p.steps for p in curve][0] == 0 and len(curve) >= 3
    check_saved_run(tmp_path, game, params, curve)


@pytest.mark.parametrize("game, params", [GOOFSPIEL, SPOOF], ids=["goofspiel4", "spoof_round"])
def test_psro_trains_saves_and_reloads(tmp_path, game, params):
    # Goofspiel's mixture measure (its whole tree through OpenSpiel, ~10 s) is left out here
    # to keep the test short: the Spoof round's is taken, and checked below.
    limit = 0 if game == "goofspiel" else TINY_PSRO.mixture_max_histories
    settings = replace(TINY_PSRO, mixture_max_histories=limit)
    curve = train_psro(
        get(game).rules(**params), steps=500, out=tmp_path, seed=1, eval_every=1, settings=settings, progress=False
    )
    record = check_saved_run(tmp_path, game, params, curve)
    points = record["curve"]
    assert record["learner"] == "PSRO" and record["iterations"] >= 1
    assert [p["population"] for p in points] == list(range(1, len(points) + 1))  # one new policy an iteration
    for point in points:
        assert np.isclose(sum(point["meta_strategy"]), 1.0)
        assert (point["mixture_exploitability"] is None) == (limit == 0)
    if limit:
        # The population starts as the uniform policy, where the mixture and the per-observation
        # average are the same policy: both measures agree.
        assert points[0]["mixture_exploitability"] == pytest.approx(points[0]["exploitability"], abs=1e-9)
    if game == "goofspiel":
        assert points[0]["exploitability"] == pytest.approx(2.5)
    agent = NetworkAgent.load(tmp_path)
    assert agent.kind == "psro" and len(agent.outputs) == len(points)
    assert agent.outputs[0] == "uniform" and set(agent.outputs[1:]) == {"q_greedy"}
    assert np.allclose(agent.weights, points[-1]["meta_strategy"])


class _Batch:
    """A network agent as a PSRO population member (what the mixture measure reads)."""

    def __init__(self, agent):
        self.agent = agent

    def probs(self, vectors, masks):
        return self.agent.policy_batch({"observation": vectors, "action_mask": masks})


def test_the_mixture_of_one_policy_is_that_policy(tmp_path):
    """The mixture measure (OpenSpiel's policy aggregator over information states, then
    NashConv) gives each trained member alone the exact exploitability the game's own
    measure gives it; a mixture of two is neither's."""
    game, params = SPOOF
    train_psro(
        get(game).rules(**params),
        steps=1500,
        out=tmp_path,
        seed=2,
        eval_every=10**6,
        settings=TINY_PSRO,
        progress=False,
    )
    saved = NetworkAgent.load(tmp_path)
    declared = hiddenhand.games()[game]
    rules = declared.rules(**params)
    measure = mixture_measure(environment(rules, 0).game, rules, 10**6)
    parts = [
        NetworkAgent(game, rules.params, "part", saved.input_size, saved.hidden, saved.num_actions, [member])
        for member in saved.members
    ]
    figures = [declared.exact_exploitability(rules, part) for part in parts]
    for part, figure in zip(parts, figures):
        assert measure([_Batch(part)], [1.0]) == pytest.approx(figure, abs=1e-9)
    assert len(parts) >= 3
    # Exploitability is convex in the mixture (a best response to it gains the mixture of its gains at most).
    assert measure([_Batch(parts[1]), _Batch(parts[2])], [0.5, 0.5]) <= (figures[1] + figures[2]) / 2 + 1e-9


def test_settings_that_would_fail_deep_inside_are_refused(tmp_path):
    with pytest.raises(ValueError, match="learn_every=2 is too small"):
        train_nfsp(
            get(SPOOF[0]).rules(**SPOOF[1]),
            steps=100,
            out=tmp_path,
            settings=replace(NFSP_OURS, learn_every=2),
            progress=False,
        )
    with pytest.raises(ValueError, match="two-player"):
        train_psro(
            get("goofspiel").rules(**{"num_cards": 3, "num_players": 3}), steps=100, out=tmp_path, progress=False
        )
    with pytest.raises(ValueError, match="meta_solver"):
        train_psro(
            get(SPOOF[0]).rules(**SPOOF[1]),
            steps=100,
            out=tmp_path,
            settings=replace(PSRO_OURS, meta_solver="nash"),
            progress=False,
        )


@pytest.mark.parametrize("train, settings", [(train_nfsp, TINY_NFSP), (train_psro, TINY_PSRO)], ids=["nfsp", "psro"])
def test_runs_reproduce_whatever_the_global_generators_hold(tmp_path, train, settings):
    """A run seeds every generator OpenSpiel draws from (psro_v2 samples its meta-game with
    Python's ``random``, NFSP and DQN with numpy's), and gives them back as it found them."""
    import random

    import torch

    game, params = SPOOF
    curves, states = [], []
    for k in range(2):
        random.seed(k)
        np.random.seed(k)
        torch.manual_seed(k)
        states.append((random.random(), np.random.random()))
        random.seed(k)
        np.random.seed(k)
        curves.append(
            train(
                get(game).rules(**params),
                steps=900,
                out=tmp_path / str(k),
                seed=4,
                eval_every=300,
                settings=settings,
                progress=False,
            )  # fmt: skip
        )
        assert (random.random(), np.random.random()) == states[-1]  # left as they were
    assert [p.exploitability for p in curves[0]] == [p.exploitability for p in curves[1]]
    agents = [NetworkAgent.load(tmp_path / str(k)) for k in range(2)]
    assert np.array_equal(agents[0].weights, agents[1].weights)


# --------------------------------------------------------------------------- the network agent
def random_agent(tmp_path, outputs=("logits",), weights=None, seed=0):
    import torch

    torch.manual_seed(seed)
    game, params = GOOFSPIEL
    rules = hiddenhand.games()[game].rules(**params)
    size, actions, hidden = rules.observation_size, rules.num_actions, (16,)
    members = [
        Member(kind, w, None if kind == "uniform" else mlp(size, hidden, actions).state_dict())
        for kind, w in zip(outputs, weights or [1.0] * len(outputs))
    ]
    return NetworkAgent(game, rules.params, "test", size, hidden, actions, members)


def test_a_mixture_is_the_weighted_average_of_its_members(tmp_path):
    agent = random_agent(tmp_path, outputs=("logits", "q_greedy", "uniform"), weights=[2.0, 1.0, 1.0])
    batch = observations(*GOOFSPIEL, games=10)
    parts = [
        NetworkAgent(agent.game, agent.params, "x", agent.input_size, agent.hidden, agent.num_actions, [member])
        for member in agent.members
    ]
    mixed = sum(w * part.policy_batch(batch) for w, part in zip([0.5, 0.25, 0.25], parts))
    assert np.allclose(agent.policy_batch(batch), mixed)
    greedy = parts[1].policy_batch(batch)
    assert set(np.unique(greedy)) <= {0.0, 1.0} and np.all(greedy[batch["action_mask"] == 0] == 0)
    assert "3 members" in repr(agent)


def test_a_damaged_or_foreign_network_is_refused(tmp_path):
    agent = random_agent(tmp_path)
    agent.save(tmp_path / "a")
    weights = tmp_path / "a" / "network.pt"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        NetworkAgent.load(tmp_path / "a")
    agent.save(tmp_path / "b")
    with pytest.raises(ValueError, match="made for goofspiel"):
        load_agent("goofspiel", str(tmp_path / "b"), {"num_cards": 5, "observation": "markov"})
    assert not is_network_dir(tmp_path / "missing") and not is_network_dir(tmp_path)
    with pytest.raises(ValueError, match="not one of"):
        NetworkAgent("goofspiel", {}, "x", 4, (), 2, [Member("softmax", 1.0, {})])


def test_psro_plays_its_meta_game_in_a_loop_with_sample_episodes_draws():
    """PSRO's meta-game games are played by ``play_out``: the same returns as psro_v2's
    ``sample_episode`` from the same seed, without a stack frame per move (that recursion
    overflowed Python's 1,000 frames on a whole Bid Spoof game between stalling members)."""
    import inspect
    import random

    import pyspiel
    from open_spiel.python import policy
    from open_spiel.python.algorithms.psro_v2.abstract_meta_trainer import sample_episode

    import hiddenhand.openspiel  # noqa: F401  (registers the games with OpenSpiel)

    game = pyspiel.load_game("hiddenhand_bid_spoof", {"num_players": 2, "coins": 3, "observation": "markov"})
    uniform = policy.UniformRandomPolicy(game)
    depths = []

    def measured(state, player=None):
        depths.append(len(inspect.stack(0)))
        return uniform(state, player)

    for seed in range(20):
        random.seed(seed)  # psro_v2's utils.random_choice draws from Python's generator
        theirs = sample_episode(game.new_initial_state(), [uniform, uniform])
        random.seed(seed)
        depths.clear()
        mine = play_out(game.new_initial_state(), [measured, measured])
        np.testing.assert_array_equal(mine, theirs)
        assert len(depths) > 5 and len(set(depths)) == 1  # as deep at the last move as at the first
