"""Self-play MMD with a critic (hiddenhand.training.critic_mmd): the closed-form step it fits
against the step written the other way round, the exploring collection's credit, learning on
every game with a batched env, reproducible runs whose saved network is what was measured."""

import json
from dataclasses import replace

import numpy as np
import pytest
from conftest import killed_at_update

import hiddenhand
from hiddenhand.agent import RandomAgent
from hiddenhand.agents.network import NetworkAgent, declares_canonical, mlp
from hiddenhand.registry import games, get, resolve
from hiddenhand.training.critic_mmd import (
    MODELLED,
    CriticMMD,
    CriticSettings,
    _Exploring,
    _fit_policy,
    train_critic_mmd,
)
from hiddenhand.training.selfplay_collection import Batch, gae

TINY = dict(games=16, batch=256)


def _mmd_step_multiplicative(pi, rho, q, eta, alpha):
    """The step as the tabular control writes it: ``pi^(1/(1+eta*alpha)) * rho^(eta*alpha/(1+eta*alpha))
    * exp(eta*Q/(1+eta*alpha))``, normalised."""
    scale = 1 + eta * alpha
    out = pi ** (1 / scale) * rho ** (eta * alpha / scale) * np.exp(eta * q / scale)
    return out / out.sum(axis=1, keepdims=True)


def test_the_policy_is_fitted_to_mmd_s_closed_form_step():
    """A policy network fitted for many steps to one batch's targets plays the step that the
    multiplicative form gives from its own probabilities, the magnet's and the critic's values
    (masked actions get nothing)."""
    import torch

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    rows, inputs, actions = 6, 5, 4
    obs = rng.normal(size=(rows, inputs)).astype(np.float32)
    masks = np.ones((rows, actions), dtype=bool)
    masks[0, 3] = masks[2, 0] = masks[2, 1] = False
    policy, magnet, critic = (mlp(inputs, (16,), actions) for _ in range(3))
    s = CriticSettings(eta=0.7, temperature=0.3, policy_steps=1500, learning_rate=5e-3)
    with torch.no_grad():
        pi = torch.softmax(policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(masks), -torch.inf), 1).numpy()
        rho = torch.softmax(magnet(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(masks), -torch.inf), 1).numpy()
        q = critic(torch.as_tensor(obs)).numpy()
    expected = _mmd_step_multiplicative(pi, np.where(masks, rho, 1.0), q, s.eta, s.temperature) * masks
    expected /= expected.sum(axis=1, keepdims=True)
    batch = Batch(obs, masks, *(np.zeros(rows),) * 5)
    _fit_policy(
        policy, magnet, critic, torch.optim.Adam(policy.parameters(), lr=s.learning_rate), batch, s, s.temperature
    )
    with torch.no_grad():
        fitted = torch.softmax(policy(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(masks), -torch.inf), 1)
    assert np.abs(fitted.numpy() - expected).max() < 0.01
    assert np.abs(pi - expected).max() > 0.05  # the step moved the policy: the check above could fail


def test_a_floor_keeps_every_legal_action_at_its_share_of_the_most_likely_one_s_probability():
    """A row whose step leaves one action at e^-100 of the best: with a floor of 0.01 that
    action keeps 0.01 of the best one's probability, the others keep their ratios (here e^-1)
    and the illegal action keeps nothing; without a floor the step is MMD's own."""
    import torch

    from hiddenhand.training.critic_mmd import masked_log_softmax, mmd_target

    legal = torch.tensor([[True, True, True, False]])
    own = masked_log_softmax(torch.zeros(1, 4), legal)
    values = torch.tensor([[0.0, -100.0, -1.0, 5.0]])
    floored = mmd_target(own, None, values, legal, eta=1.0, alpha=0.0, floor=0.01)
    weights = np.array([1.0, 0.01, np.exp(-1.0), 0.0])
    assert np.allclose(floored.numpy()[0], weights / weights.sum(), rtol=1e-5, atol=0)
    free = mmd_target(own, None, values, legal, eta=1.0, alpha=0.0)
    assert np.allclose(free.numpy()[0], np.array([1.0, np.exp(-100.0), np.exp(-1.0), 0.0]) / (1 + np.exp(-1.0)))


def test_per_decision_lambda_is_each_decision_s_own():
    """GAE with one lambda per decision, the same for every decision of one player in one game
    (as the exploring collection sets it), gives each decision the advantage that the whole
    collection computed with that player's lambda would give it."""
    rng = np.random.default_rng(1)
    steps, n = 9, 3
    arrays = {
        "players": np.tile([0, 1, 0], (steps, 1)) ^ (np.arange(steps)[:, None] % 2),
        "values": rng.normal(size=(steps, n)),
        "banked": rng.normal(size=(steps, n)),
        "ended": np.zeros((steps, n), dtype=bool),
        "rewards": np.zeros((steps, n, 2)),
    }
    arrays["ended"][[3, 8], :] = True
    arrays["rewards"][[3, 8]] = rng.normal(size=(2, n, 1)) * [1, -1]
    chosen = rng.choice([0.0, 0.6, 1.0], size=(n, 2))
    lam = chosen[np.arange(n), arrays["players"]]
    mixed, _ = gae(arrays, lam)
    for value in (0.0, 0.6, 1.0):
        alone, _ = gae(arrays, value)
        assert np.allclose(mixed[lam == value], alone[lam == value])


@pytest.mark.parametrize("explore", [0.0, 0.5, 1.0])
def test_the_exploring_seat_is_credited_one_round_and_its_opponents_are_kept_from_the_critic(explore):
    """In a game where one seat explores, that seat's decisions are marked for the critic with
    lambda 0 and the other seats' are not marked; in the other games every decision is marked
    with the learner's lambda. Over many games the share of exploring games is ``explore``."""
    import torch

    params = {"num_cards": 4, "observation": "markov"}
    s = CriticSettings(games=64, batch=64 * 16, explore=explore, gae_lambda=0.7)
    torch.manual_seed(0)
    nets = [mlp(16, (8,), 4) for _ in range(2)]
    collector = _Exploring("goofspiel", params, s, 0, nets[1], "cpu")
    explorers, marks = [], []
    original = collector.act

    def act(policy, obs, info):
        columns = original(policy, obs, info)
        explorers.append(collector.explorer.copy())
        marks.append((info["player"].copy(), columns["lam"], columns["critic"]))
        return columns

    collector.act = act
    batch, played, _ = collector.collect(nets[0], s.gae_lambda, 0.1)
    for explorer, (player, lam, critic) in zip(explorers, marks):
        exploring = explorer == player
        assert (lam[exploring] == 0.0).all() and (lam[~exploring] == 0.7).all()
        assert critic[exploring].all() and critic[explorer < 0].all()
        assert not critic[(explorer >= 0) & ~exploring].any()
    share = np.mean([(e >= 0).mean() for e in explorers])
    assert share == pytest.approx(explore, abs=0.1)
    assert set(batch.extra) == {"lam", "critic"} and len(batch.extra["critic"]) == len(batch.actions)


@pytest.mark.parametrize("canonical", [False, True])
@pytest.mark.parametrize("name", [name for name, game in games().items() if game.vector is not None])
def test_it_trains_on_every_game_with_a_batched_env_and_saves_what_it_measured(name, canonical, tmp_path):
    """A short run on each game with a batched env (its smallest configuration with a Markov
    observation where it has one): the curve is measured where the game declares a measure,
    and the saved network plays whole games and measures as the run's last point did. Asked
    for the canonical observation, the networks read it where the game declares one."""
    game = get(name)
    rules = game.rules(**SMALL.get(name, {}))
    settings = replace(CriticSettings(), **TINY, canonical=canonical)
    curve = train_critic_mmd(rules, steps=1024, out=tmp_path, eval_every=1024, settings=settings, progress=False)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["steps"] >= 1024 and record["device"] == "cpu"
    modelled = game.round_model is not None and resolve(game.round_model)(rules) is not None
    assert record["critic_targets"] == ("expected" if modelled else "sampled")
    agent = NetworkAgent.load(tmp_path)
    declared = declares_canonical(rules, agent.input_size, agent.num_actions)
    assert agent.view == ("canonical" if canonical and declared else "observation")
    from hiddenhand.training.evaluation import play_games

    returns = play_games(rules, [agent] + [RandomAgent()] * (rules.num_players - 1), 4, seed=0)
    assert returns.shape == (4, rules.num_players)
    if curve[-1].exploitability is not None:
        assert game.exact_exploitability(rules, agent) == pytest.approx(curve[-1].exploitability, abs=1e-9)


SMALL = {
    "goofspiel": {"num_cards": 3, "observation": "markov"},
    "spoof": {"matches": 2, "observation": "markov"},
    "bid_spoof": {"num_players": 2, "coins": 2, "observation": "markov"},
}
"""Small configurations of our games with a batched env; a user's game runs on its defaults."""


def _finished_collection(learner):
    """A collection of ``learner``'s that holds a finished game (the first ones hold none)."""
    batch = learner.collector.collect(learner.policy, 0.0, learner.scale)[0]
    while not len(batch.actions):
        batch = learner.collector.collect(learner.policy, 0.0, learner.scale)[0]
    return batch


def _model_targets(learner, game, rules, batch):
    """The round model's targets at ``batch``'s observations with ``learner``'s policy and
    critic as they are now."""
    import torch

    from hiddenhand.training.critic_mmd import distinct_observations, masked_log_softmax

    def probs(x, legal):
        return torch.softmax(masked_log_softmax(learner.policy(x), legal), dim=1)

    seen = torch.as_tensor(distinct_observations(batch)[0])
    with torch.no_grad():
        return resolve(game.round_model)(rules).expected_q(seen, probs, learner.critic, learner.scale)


@pytest.mark.parametrize("name", ["spoof", "bid_spoof"])
def test_on_a_whole_game_of_rounds_the_critic_s_targets_are_the_game_s_round_model_s(name):
    """``hiddenhand train mmd-critic spoof|bid-spoof --observation markov`` finds the model
    through the game's declaration; its critic's targets for a collection are the model's
    expectation with the policy and the critic as they were before the fit (one sweep; more:
    the next test)."""
    import torch

    from hiddenhand.training.critic_mmd import CriticMMD, settings_for_rules

    game = get(name)
    rules = game.rules(**SMALL[name])
    settings = settings_for_rules(rules)
    assert settings.lookahead and settings.targets == "auto"
    learner = CriticMMD(rules, replace(settings, games=64, batch=512, critic_sweeps=1), seed=0, device="cpu")
    batch = _finished_collection(learner)
    reference = _model_targets(learner, game, rules, batch)
    targets = learner.critic.fit(batch)
    assert torch.allclose(targets, reference, atol=1e-6)
    assert reference.abs().max() > 0.01


def test_each_sweep_recomputes_the_targets_from_the_critic_as_the_last_sweep_left_it():
    """With ``critic_sweeps`` 3 the targets returned (what the step reads) are the round
    model's expectation with the critic after two sweeps (a learner of 2 sweeps, the same
    seed and batch, fitted just before), and the collection is remembered once, not three
    times."""
    import torch

    from hiddenhand.training.critic_mmd import CriticMMD, settings_for_rules

    game = get("spoof")
    rules = game.rules(**SMALL["spoof"])
    settings = replace(settings_for_rules(rules), games=64, batch=512, replay=4)
    three = CriticMMD(rules, replace(settings, critic_sweeps=3), seed=0, device="cpu")
    two = CriticMMD(rules, replace(settings, critic_sweeps=2), seed=0, device="cpu")
    batch = _finished_collection(three)
    first = two.critic.fit(batch)
    reference = _model_targets(two, game, rules, batch)
    targets = three.critic.fit(batch)
    assert torch.allclose(targets, reference, atol=1e-6)
    assert not torch.allclose(targets, first, atol=1e-3)  # the sweeps moved the values
    assert len(three.critic.memory) == 1


def test_a_run_reproduces(tmp_path):
    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    settings = replace(CriticSettings(), **TINY)
    curves = [
        train_critic_mmd(
            rules, steps=1024, out=tmp_path / str(k), seed=5, eval_every=512, settings=settings, progress=False
        )
        for k in (0, 1)
    ]
    assert [p.exploitability for p in curves[0]] == [p.exploitability for p in curves[1]]


@pytest.mark.parametrize("targets, share", [("sampled", 1 / 3), ("expected", 1 / 10)])
def test_it_learns_goofspiel_far_below_uniform_play(targets, share, tmp_path):
    """Four cards, a million decisions on the defaults of each kind of critic target: the
    policy network's exact exploitability ends below a third of uniform play's (2.5) with
    sampled targets (the learner stands near 0.5 after a million decisions) and below a
    tenth with the round model's (near 0.1; docs/training.md)."""
    rules = get("goofspiel").rules(num_cards=4, observation="markov")
    uniform = hiddenhand.games()["goofspiel"].exact_exploitability(rules, RandomAgent())
    settings = CriticSettings() if targets == "sampled" else MODELLED
    curve = train_critic_mmd(
        rules,
        steps=1_000_000,
        out=tmp_path,
        eval_every=10**9,
        settings=replace(settings, targets=targets),
        progress=False,
        seed=1,
    )
    assert curve[-1].exploitability < uniform * share


def test_bad_settings_are_refused(tmp_path):
    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    for change, message in (
        ({"eta": 0}, "eta=0 is not allowed; allowed: a number more than 0"),
        ({"explore": 1.5}, "explore=1.5 is not allowed; allowed: a number 0 to 1"),
        ({"hidden": ()}, r"hidden=\(\) is not allowed; allowed: one or more positive widths"),
        ({"replay": 0}, "replay"),
        ({"critic_sweeps": 0}, "critic_sweeps=0 is out of range; allowed: 1 to 10000"),
        ({"critic_average": 2.0}, "critic_average=2.0 is not allowed; allowed: a number 0 to 1"),
        ({"floor": 1.0}, "floor=1.0 is not allowed; allowed: a number 0 or more, below 1"),
    ):
        with pytest.raises(ValueError, match=message):
            train_critic_mmd(
                rules, steps=10, out=tmp_path, settings=replace(CriticSettings(), **change), progress=False
            )


@pytest.mark.parametrize("critic_annealed", [False, True])
def test_the_learning_rates_anneal_with_the_budget_left_where_the_settings_say(critic_annealed):
    from hiddenhand.training.critic_mmd import CriticMMD

    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    s = replace(CriticSettings(), anneal_learning_rate=True, anneal_critic_learning_rate=critic_annealed, **TINY)
    learner = CriticMMD(rules, s, 0, "cpu")
    learner.update(left=0.25)
    assert [g["lr"] for g in learner.optimizer.param_groups] == [0.25 * s.learning_rate]
    critic_rate = (0.25 if critic_annealed else 1.0) * s.critic_learning_rate
    assert [g["lr"] for g in learner.critic.optimizer.param_groups] == [critic_rate]


def test_a_polyak_magnet_moves_its_share_of_the_way_to_the_policy_after_each_update():
    import torch

    from hiddenhand.training.critic_mmd import CriticMMD

    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    learner = CriticMMD(rules, replace(CriticSettings(), magnet_polyak=0.25, **TINY), 0, "cpu")
    with torch.no_grad():
        for weights in learner.magnet.parameters():
            weights.add_(1.0)  # apart from the policy, so that a move shows
    before = [w.clone() for w in learner.magnet.parameters()]
    learner.update()
    for old, now, policy in zip(before, learner.magnet.parameters(), learner.policy.parameters()):
        assert torch.allclose(now, 0.75 * old + 0.25 * policy, atol=1e-6)


def test_an_averaged_critic_moves_its_share_of_the_way_after_each_fit_and_is_what_the_learner_reads():
    import torch

    from hiddenhand.training.critic_mmd import CriticMMD

    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    learner = CriticMMD(rules, replace(CriticSettings(), critic_average=0.25, **TINY), 0, "cpu")
    critic = learner.critic
    with torch.no_grad():
        for weights in critic.average.parameters():
            weights.add_(1.0)  # apart from the Q network, so that a move shows
    before = [w.clone() for w in critic.average.parameters()]
    learner.update()
    for old, now, net in zip(before, critic.average.parameters(), critic.net.parameters()):
        assert torch.allclose(now, 0.75 * old + 0.25 * net, atol=1e-6)
    obs = torch.rand(5, learner.inputs)
    with torch.no_grad():
        assert torch.equal(critic(obs), critic.average(obs))
        assert not torch.allclose(critic(obs), critic.net(obs))


@pytest.mark.parametrize("lookahead", [True, False])
def test_with_lookahead_the_policy_step_reads_the_round_model_not_the_q_network(lookahead):
    """At 2 cards every bid leads to the last round, which the round model values itself, so
    with ``lookahead`` the step reads exact values whatever the Q network outputs: two learners
    whose Q networks differ take the same step. Without it they read their networks and differ."""
    import torch

    from hiddenhand.training.critic_mmd import CriticMMD

    rules = get("goofspiel").rules(num_cards=2, observation="markov")
    s = replace(MODELLED, lookahead=lookahead, **TINY)
    first, second = CriticMMD(rules, s, 0, "cpu"), CriticMMD(rules, s, 0, "cpu")
    with torch.no_grad():
        for weights in second.critic.net.parameters():
            weights.add_(0.5)
    before = [w.clone() for w in first.policy.parameters()]
    first.update()
    second.update()
    assert not all(torch.equal(a, b) for a, b in zip(before, first.policy.parameters()))  # the step moved it
    same = all(torch.equal(a, b) for a, b in zip(first.policy.parameters(), second.policy.parameters()))
    assert same == lookahead


@pytest.mark.ctrl_c
def test_a_run_stopped_by_ctrl_c_resumes_and_trains_the_network_an_uncut_run_trains(tmp_path, monkeypatch):
    """Ctrl-C ends the run after the update it came in (saved, then measured there); the
    resumed run goes on from that update and ends with the uncut run's network, its curve
    the uncut one's with the point measured at the stop."""
    import os
    import signal

    from hiddenhand.interrupt import Interrupted

    rules = get("goofspiel").rules(**SMALL["goofspiel"])
    run = dict(steps=2048, eval_every=512, settings=replace(CriticSettings(), **TINY), progress=False, seed=3)
    straight = train_critic_mmd(rules, out=tmp_path / "straight", **run)
    update = CriticMMD.update

    def pressed(learner, left=1.0):
        if learner.updates == 4:  # 1,024 decisions: the update goes on, then the run stops at 1,280
            os.kill(os.getpid(), signal.SIGINT)
        return update(learner, left)

    monkeypatch.setattr(CriticMMD, "update", pressed)
    with pytest.raises(Interrupted, match="after 1280 of 2048 decisions"):
        train_critic_mmd(rules, out=tmp_path / "cut", **run)
    monkeypatch.setattr(CriticMMD, "update", update)
    resumed = train_critic_mmd(rules, out=tmp_path / "cut", resume=True, **run)
    assert [p.steps for p in resumed] == [0, 512, 1024, 1280, 1536, 2048]
    kept = [(p.steps, p.exploitability) for p in resumed if p.steps != 1280]
    assert kept == [(p.steps, p.exploitability) for p in straight]
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["resumed"] == [1280]
    _assert_same_network(tmp_path / "straight", tmp_path / "cut")


def _assert_same_network(one, other):
    weights = [NetworkAgent.load(path).members[0].state_dict for path in (one, other)]
    assert weights[0].keys() == weights[1].keys()
    assert all(weights[0][k].equal(weights[1][k]) for k in weights[0])


def test_the_command_resumes_a_cut_run_and_no_other(tmp_path, capsys, monkeypatch):
    """``--resume`` goes on with a run cut in OUT; without it the command refuses to start
    another run over it, and with it a different command is refused naming what differs."""
    from hiddenhand.cli import main

    out = str(tmp_path / "run")
    argv = ["train", "mmd-critic", "goofspiel", "--cards", "3", "--observation", "markov", "--games", "16"]
    argv += ["--batch", "256", "--steps", "1024", "--eval-every", "512", "--out", out]
    with killed_at_update(monkeypatch, 3):
        main(argv)
    for again, message in (
        (argv, "holds a run cut after 512 of 1024 decisions (state.pkl): add --resume to go on with it"),
        ([*argv, "--resume", "--seed", "1", "--batch", "512"], "seed 0 (here 1)"),
    ):
        with pytest.raises(SystemExit) as info:
            main(again)
        assert info.value.code == 2 and message in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0
    assert "resuming the run saved in" in capsys.readouterr().err
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["resumed"] == [512] and record["steps"] == 1024
    assert main(argv) == 0  # a run that finished may be trained over
