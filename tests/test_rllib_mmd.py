"""Self-play MMD with a critic as an RLlib Learner (hiddenhand train rllib --update mmd-critic,
the rllib-mmd-critic learner): its loss fits the policy to MMD's closed-form step and the
critic to its targets (checked against the formula in numpy), two remote env runners train
it on every game (the round model's targets where the game has one, sampled
elsewhere) and the saved module reloads and measures as trained; its settings
are mmd-critic's; a round model asked of a game without one is refused before Ray starts.
A local Ray instance on 127.0.0.1, usage statistics off, two CPUs, shut down at the end."""

import importlib.util
import json
from dataclasses import replace

import numpy as np
import pytest
from test_rllib import SMALL, _decision_observations

import hiddenhand

pytestmark = pytest.mark.xdist_group("ray")  # one Ray instance at a time

if importlib.util.find_spec("ray") is None:  # not imported here: see start_ray
    pytest.skip("Ray is not installed (pip install 'hiddenhand[ray]')", allow_module_level=True)


def _rules(game: str):
    return hiddenhand.games()[game].rules(**SMALL[game])


@pytest.mark.parametrize(
    "game, targets",
    [("goofspiel", "expected"), ("spoof", "expected"), ("bid_spoof", "expected"), ("egghead", "sampled")],
)
def test_two_env_runners_train_it_and_the_module_reloads_as_trained(ray_local, game, targets, tmp_path):
    from hiddenhand.agents import load_agent
    from hiddenhand.rllib import ACTION_VALUES
    from hiddenhand.training.rllib_train import mmd_critic_settings_for_rules, train_rllib

    rules = _rules(game)
    base = mmd_critic_settings_for_rules(rules)
    settings = replace(base, env_runners=2, envs_per_runner=2, batch=256, epochs=2)
    curve = train_rllib(rules, steps=512, out=tmp_path, eval_every=512, settings=settings, progress=False)
    assert [point.steps >= 0 for point in curve] == [True, True] and curve[-1].steps >= 512
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["critic_targets"] == targets and run["settings"]["update"] == "mmd-critic"
    agent = load_agent(game, str(tmp_path), SMALL[game])
    assert agent.module.model_config[ACTION_VALUES] == max(abs(u) for u in rules.utility_range)
    shown = _decision_observations(rules, 200)
    probs = agent.policy_batch(shown)
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs[shown["action_mask"] == 0] == 0).all()
    if game == "egghead":  # three players: no exact measure
        assert curve[-1].exploitability is None
    else:
        exact = hiddenhand.games()[game].exact_exploitability(rules, agent)
        assert exact == pytest.approx(curve[-1].exploitability, abs=1e-9)


def _fit_part(learner, batch: dict, part: str, steps: int) -> None:
    """``steps`` Adam steps of the learner's loss on ``batch``, on the parameters of the
    shared module's ``critic`` (value head and its encoder) or of its ``policy`` alone."""
    import torch

    module = learner.module["shared"]
    critic = {id(p) for name, p in module.named_parameters() if name.startswith(("vf.", "encoder.critic_encoder."))}
    config_for = learner.config.get_config_for_module("shared")
    params = [p for p in module.parameters() if (id(p) in critic) == (part == "critic")]
    optimizer = torch.optim.Adam(params, lr=3e-3)
    for _ in range(steps):
        fwd = module.forward_train(batch)
        loss = learner.compute_loss_for_module(module_id="shared", config=config_for, batch=batch, fwd_out=fwd)
        optimizer.zero_grad()
        module.zero_grad()
        loss.backward()
        optimizer.step()


@pytest.mark.parametrize("magnet_every, floor", [(0, 0.0), (1, 0.0), (0, 0.7)])
def test_the_loss_fits_the_policy_to_mmds_step_and_the_critic_to_its_targets(ray_local, magnet_every, floor):
    """On a fixed batch of 4-card decisions, Adam steps on the policy's parameters alone take
    the policy to ``pi' ~ exp((log pi + eta*alpha*log rho + eta*Q/unit) / (1 + eta*alpha))``
    over the legal actions (``pi`` the batch's own logits, ``rho`` the magnet: uniform, or
    with ``magnet_every`` the module as it was when the update began; ``Q`` the critic's
    values held still; with a ``floor``, no action below that share of the most likely
    one's probability), computed here in numpy; steps on the critic's parameters alone take
    the played action's value to its target, the others' nowhere in particular."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.evaluation.postprocessing import Postprocessing

    from hiddenhand.rllib import OBSERVATIONS, MultiAgentGame, ppo_config
    from hiddenhand.training.rllib_mmd import mmd_learner
    from hiddenhand.training.rllib_train import mmd_critic_settings_for_rules, rllib_training

    torch.manual_seed(0)
    rules = _rules("goofspiel")
    s = replace(
        mmd_critic_settings_for_rules(rules),
        targets="sampled",
        eta=2.0,
        temperature=0.2,
        hidden=(64, 64),
        magnet_every=magnet_every,
        floor=floor,
    )
    config = (
        ppo_config("goofspiel", SMALL["goofspiel"], hidden=s.hidden, action_values=10.0)
        .training(**rllib_training(s, 10**6))
        .learners(**mmd_learner(rules, s, "sampled"))
    )
    env = MultiAgentGame("goofspiel", **SMALL["goofspiel"])
    seat = env.possible_agents[0]
    learner = config.build_learner(spaces={"shared": (env.observation_spaces[seat], env.action_spaces[seat])})
    module = learner.module["shared"]
    learner.before_gradient_based_update(timesteps={})  # the update begins: a magnet moves if due
    assert ("shared" in learner.magnets) == (magnet_every == 1)
    shown = _decision_observations(rules, 400, seed=3)
    _, first = np.unique(shown["observation"], axis=0, return_index=True)
    shown = {key: value[np.sort(first)[:24]] for key, value in shown.items()}
    masks = shown["action_mask"].astype(bool)
    rng = np.random.default_rng(0)
    played = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    wanted = rng.uniform(-5, 5, len(played))
    batch = {
        Columns.OBS: {
            OBSERVATIONS: torch.as_tensor(shown["observation"], dtype=torch.float32),
            "action_mask": torch.as_tensor(masks, dtype=torch.float32),
        },
        Columns.ACTIONS: torch.as_tensor(played),
        Postprocessing.VALUE_TARGETS: torch.as_tensor(wanted, dtype=torch.float32),
    }
    with torch.no_grad():
        batch[Columns.ACTION_DIST_INPUTS] = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        q = module.compute_q(batch).numpy() / 10.0
    logits = batch[Columns.ACTION_DIST_INPUTS].numpy().astype(np.float64)
    before = np.where(masks, logits - logits.max(1, keepdims=True), -np.inf)
    before -= np.log(np.exp(before).sum(1, keepdims=True))
    magnet = before if magnet_every else -np.log(masks.sum(1, keepdims=True))
    ea = s.eta * s.temperature
    step = np.where(masks, (before + ea * magnet + s.eta * q) / (1 + ea), -np.inf)
    if floor:
        lowest = step.max(1, keepdims=True) + np.log(floor)
        assert (masks & (step < lowest)).any()  # the floor lifts some action: the check below could fail
        step = np.where(masks, np.maximum(step, lowest), -np.inf)
    expected = np.exp(step - step.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)

    def fit(part: str, steps: int) -> None:
        _fit_part(learner, batch, part, steps)

    fit("policy", 1500)
    with torch.no_grad():
        now = torch.softmax(module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].double(), dim=1).numpy()
        assert np.allclose(module.compute_q(batch).numpy() / 10.0, q)  # the critic held still
    assert np.abs(now - expected).max() < 0.02
    assert np.abs(now - np.exp(before)).max() > 0.1  # the step moved the policy
    fit("critic", 1500)
    with torch.no_grad():
        values = module.compute_q(batch).numpy()
    assert np.abs(values[np.arange(len(played)), played] - wanted).max() < 0.1


def test_with_lookahead_the_step_reads_the_round_s_values_not_the_value_head(ray_local):
    """At 2 cards each first bid leads to the last round, which the round model values
    itself; both hands hold cards 0 and 1, so bidding ``a`` against ``b`` wins the upcard's
    worth ``u`` times ``sign(a - b)`` and then the other prize's ``c`` times ``sign(b - a)``:
    ``Q(a) = (u - c) * sum_b pi(b) sign(a - b)``, the other bidding by the same observation.
    With ``lookahead`` Adam steps on the policy alone take it to MMD's step from those values,
    computed here by hand, and not from the value head's."""
    import torch
    from ray.rllib.core.columns import Columns

    from hiddenhand.rllib import OBSERVATIONS, MultiAgentGame, ppo_config
    from hiddenhand.training.rllib_mmd import mmd_learner
    from hiddenhand.training.rllib_train import mmd_critic_settings_for_rules, rllib_training

    torch.manual_seed(0)
    params = dict(SMALL["goofspiel"], num_cards=2)
    rules = hiddenhand.games()["goofspiel"].rules(**params)
    unit = rules.largest_payoff
    s = replace(
        mmd_critic_settings_for_rules(rules),
        targets="expected",
        lookahead=True,
        eta=2.0,
        temperature=0.2,
        hidden=(16, 16),
        magnet_every=0,
    )
    config = (
        ppo_config("goofspiel", params, hidden=s.hidden, action_values=unit)
        .training(**rllib_training(s, 10**6))
        .learners(**mmd_learner(rules, s, "expected"))
    )
    env = MultiAgentGame("goofspiel", **params)
    seat = env.possible_agents[0]
    learner = config.build_learner(spaces={"shared": (env.observation_spaces[seat], env.action_spaces[seat])})
    module = learner.module["shared"]
    shown = _decision_observations(rules, 200, seed=1)
    first = shown["action_mask"].sum(1) == 2  # the first round's decisions
    _, distinct = np.unique(shown["observation"][first], axis=0, return_index=True)
    shown = {key: value[first][distinct] for key, value in shown.items()}
    assert len(distinct) == 2  # the upcard is card 0 or card 1
    batch = {
        Columns.OBS: {
            OBSERVATIONS: torch.as_tensor(shown["observation"], dtype=torch.float32),
            "action_mask": torch.as_tensor(shown["action_mask"], dtype=torch.float32),
        }
    }
    with torch.no_grad():
        batch[Columns.ACTION_DIST_INPUTS] = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        head = module.compute_q(batch).numpy() / unit
    logits = batch[Columns.ACTION_DIST_INPUTS].numpy().astype(np.float64)
    before = logits - logits.max(1, keepdims=True)
    before -= np.log(np.exp(before).sum(1, keepdims=True))
    pi = np.exp(before)
    upcard = shown["observation"][:, rules.markov_layout.slice("prize")].argmax(1)
    worth_gap = np.where(upcard == 1, 1.0, -1.0)  # (upcard + 1) - (other prize + 1)
    q = worth_gap[:, None] * np.stack([-pi[:, 1], pi[:, 0]], axis=1) / unit
    assert np.abs(q - head).max() > 0.05  # the value head says otherwise: the check below could fail
    ea = s.eta * s.temperature
    step = (before + ea * np.log(0.5) + s.eta * q) / (1 + ea)
    expected = np.exp(step - step.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    _fit_part(learner, batch, "policy", 1500)
    with torch.no_grad():
        now = torch.softmax(module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].double(), dim=1).numpy()
    assert np.abs(now - expected).max() < 0.02
    assert np.abs(now - pi).max() > 0.05  # the step moved the policy


def test_its_settings_are_those_of_mmd_critic_in_rllibs_terms():
    from hiddenhand.training.critic_mmd import settings_for_rules
    from hiddenhand.training.rllib_train import mmd_critic_settings_for_rules, rllib_training

    for game in ("goofspiel", "spoof"):
        ours, theirs = settings_for_rules(_rules(game)), mmd_critic_settings_for_rules(_rules(game))
        assert theirs.update == "mmd-critic" and theirs.epochs == ours.policy_steps and theirs.eta == ours.eta
        assert (theirs.temperature, theirs.anneal_entropy) == (ours.temperature, ours.anneal)
        assert (theirs.magnet_every, theirs.floor) == (ours.magnet_every, ours.floor)
        assert (theirs.learning_rate, theirs.anneal_lr) == (ours.learning_rate, ours.anneal_learning_rate)
        assert (theirs.critic_learning_rate, theirs.hidden, theirs.targets) == (
            ours.critic_learning_rate,
            ours.hidden,
            ours.targets,
        )
    spoof = replace(mmd_critic_settings_for_rules(_rules("spoof")), temperature=0.3)
    # RLlib's entropy schedule carries the temperature, annealed where the settings say so
    assert rllib_training(spoof, 10_000)["entropy_coeff"] == 0.3
    assert rllib_training(replace(spoof, anneal_entropy=True), 10_000)["entropy_coeff"] == [[0, 0.3], [10_000, 0.0]]


def test_bad_settings_are_refused_before_ray_starts(tmp_path, monkeypatch):
    from hiddenhand.training import rllib_train

    def started(*args, **kwargs):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(rllib_train, "start_ray", started)
    spoof = rllib_train.mmd_critic_settings_for_rules(_rules("spoof"))
    egghead = rllib_train.mmd_critic_settings_for_rules(_rules("egghead"))  # no round model
    with pytest.raises(ValueError, match="targets='expected' needs a round model"):
        rllib_train.train_rllib(_rules("egghead"), steps=1, out=tmp_path, settings=replace(egghead, targets="expected"))
    refused = (
        ("update", "a2c"),
        ("targets", "exact"),
        ("eta", 0.0),
        ("temperature", -1.0),
        ("magnet_every", -1),
        ("floor", 1.0),
    )
    for name, value in refused:
        with pytest.raises(ValueError, match=name):
            rllib_train.train_rllib(_rules("spoof"), steps=1, out=tmp_path, settings=replace(spoof, **{name: value}))
