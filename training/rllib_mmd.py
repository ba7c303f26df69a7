"""The update of ``hiddenhand train mmd-critic`` as an RLlib Learner (new API stack), for
``hiddenhand train rllib --update mmd-critic`` (and the ``rllib-mmd-critic`` learner).

RLlib's PPO collects as usual (env runners, local or over a cluster, one masked module
shared by the seats), and its learner pipeline estimates each decision's lambda-return
(gamma 1) from the module's state value, which here is the policy's expectation of a value
head with one output per action (:meth:`hiddenhand.rllib.MaskedPPOModule.compute_q`, on an
encoder of its own). :class:`MMDCriticLearner` then replaces PPO's loss by the two fits of
:mod:`.critic_mmd`, summed, each on its own Adam optimiser:

- **critic**: the value head regresses the played action's value on its lambda-return
  (``targets`` ``sampled``), or every legal action's value on its expectation over the round
  under the game's round model (``expected``, where the game declares one: two-player
  Markov Goofspiel, whole Spoof and whole two-player Bid Spoof on the Markov observation),
  squared errors in units of the game's largest payoff;
- **policy**: cross entropy towards MMD's closed-form step
  (:func:`~.critic_mmd.mmd_target`) from the policy that collected the batch (RLlib keeps
  its logits), the magnet at the temperature of the entropy coefficient's schedule (so
  RLlib anneals it) and the critic's values; the step is the same every epoch, so the
  epochs are the policy's fitting steps. The magnet is the uniform policy, or with
  ``magnet_every`` a frozen copy of the module taken before every so many updates, as
  :mod:`.critic_mmd` moves it.

What :mod:`.critic_mmd` does and this does not: exploring seats, a critic that remembers
earlier collections, targets swept several times an update
(:func:`.rllib_train.mmd_critic_settings_for_rules`).
"""

from __future__ import annotations

import copy
from typing import Any

from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.learner import POLICY_LOSS_KEY, VF_LOSS_KEY
from ray.rllib.evaluation.postprocessing import Postprocessing

from hiddenhand.core import Rules
from hiddenhand.registry import get
from hiddenhand.rllib import ACTION_VALUES, OBSERVATIONS
from hiddenhand.training.critic_mmd import cross_entropy, masked_log_softmax, mmd_target, round_model


def mmd_learner(rules: Rules, settings, targets: str) -> dict[str, Any]:
    """``AlgorithmConfig.learners`` arguments that train with :class:`MMDCriticLearner` on
    ``rules`` under the RLlib ``settings``, the critic's ``targets`` ``expected`` (the game's
    round model) or ``sampled``."""
    extra = {
        "game": rules.name,
        "params": dict(rules.params),
        "targets": targets,
        "eta": settings.eta,
        "critic_learning_rate": settings.critic_learning_rate,
        "magnet_every": settings.magnet_every,
        "lookahead": settings.lookahead,
        "floor": settings.floor,
    }
    return {"learner_class": MMDCriticLearner, "learner_config_dict": extra}


def _critic_parameters(module) -> set[int]:
    """The ids of the value head's and its encoder's parameters."""
    return {id(p) for name, p in module.named_parameters() if name.startswith(("vf.", "encoder.critic_encoder."))}


class MMDCriticLearner(PPOTorchLearner):
    """PPO's learner (its advantage estimation, schedules and metrics) with the loss of
    :mod:`.critic_mmd`; see the module docstring."""

    def build(self) -> None:
        super().build()
        extra = self.config.learner_config_dict
        rules = get(extra["game"]).rules(**extra["params"])
        self.round_model = round_model(rules, extra["targets"])
        self.magnet_every, self.updates = extra["magnet_every"], 0
        self.magnets: dict = {}
        """Per module, the frozen copy that is its magnet (none: the uniform policy)."""

    def before_gradient_based_update(self, *, timesteps: dict) -> None:
        """Move the magnets to the modules as they are, where ``magnet_every`` says it is due."""
        super().before_gradient_based_update(timesteps=timesteps)
        if self.magnet_every and self.updates % self.magnet_every == 0:
            for module_id in self.module.keys():
                self.magnets[module_id] = copy.deepcopy(self.module[module_id].unwrapped()).eval()
        self.updates += 1

    def configure_optimizers_for_module(self, module_id, config=None) -> None:
        """Two Adam optimisers: the policy's at ``lr`` (RLlib's schedule) and the critic's at
        the setting ``critic_learning_rate``."""
        import torch

        module = self._module[module_id]
        critic = _critic_parameters(module)
        params = self.get_parameters(module)
        rates = {"policy": config.lr, "critic": self.config.learner_config_dict["critic_learning_rate"]}
        for name, rate in rates.items():
            group = [p for p in params if (id(p) in critic) == (name == "critic")]
            self.register_optimizer(
                module_id=module_id,
                optimizer_name=name,
                optimizer=torch.optim.Adam(group),
                params=group,
                lr_or_lr_schedule=rate,
            )

    def compute_loss_for_module(self, *, module_id, config, batch: dict, fwd_out: dict):
        import torch

        module = self.module[module_id].unwrapped()
        unit = module.model_config[ACTION_VALUES]
        eta = config.learner_config_dict["eta"]
        seen = batch[Columns.OBS]
        legal = seen["action_mask"] > 0
        rows = legal.any(dim=1)  # a game's final observation has no move
        if Columns.LOSS_MASK in batch:  # RLlib's extra step at each episode's end
            rows &= batch[Columns.LOSS_MASK].bool()
        legal = legal[rows]
        q = module.compute_q(batch)[rows]
        if self.round_model is not None:
            weights = legal.float()
            with torch.no_grad():  # once per distinct observation: a batch repeats the rounds' openings
                distinct, back = torch.unique(seen[OBSERVATIONS][rows].float(), dim=0, return_inverse=True)
                targets = self.round_model.expected_q(distinct, _probs(module), _values(module), 1.0)[back]
        else:
            weights = torch.nn.functional.one_hot(batch[Columns.ACTIONS][rows].long(), legal.shape[1]).float()
            targets = weights * batch[Postprocessing.VALUE_TARGETS][rows, None]
        critic_loss = 0.5 * (weights * ((q - targets) / unit) ** 2).sum(dim=1).mean()
        alpha = float(self.entropy_coeff_schedulers_per_module[module_id].get_current_value())
        before = masked_log_softmax(batch[Columns.ACTION_DIST_INPUTS][rows], legal)
        anchor = None
        if module_id in self.magnets:
            with torch.no_grad():
                anchor = self.magnets[module_id].forward_inference(batch)[Columns.ACTION_DIST_INPUTS][rows]
            anchor = masked_log_softmax(anchor, legal)
        looked = self.round_model is not None and config.learner_config_dict["lookahead"]
        values = (targets if looked else q.detach()) / unit
        target = mmd_target(before, anchor, values, legal, eta, alpha, config.learner_config_dict["floor"])
        logp = masked_log_softmax(fwd_out[Columns.ACTION_DIST_INPUTS][rows], legal)
        policy_loss = cross_entropy(target, logp, legal).mean()
        self.metrics.log_dict({POLICY_LOSS_KEY: policy_loss, VF_LOSS_KEY: critic_loss}, key=module_id, window=1)
        return policy_loss + critic_loss


def _shown(x, legal) -> dict:
    return {Columns.OBS: {OBSERVATIONS: x, "action_mask": legal.float()}}


def _probs(module):
    """The module's policy at observations ``x`` with legal actions ``legal``, as the round
    model reads it."""
    import torch

    def probs(x, legal):
        logits = module.forward_inference(_shown(x, legal))[Columns.ACTION_DIST_INPUTS]
        return torch.softmax(masked_log_softmax(logits, legal), dim=1)

    return probs


def _values(module):
    """The module's action values at observations ``x``, as the round model reads them."""

    def values(x):
        return module.compute_q(_shown(x, x.new_ones(len(x), int(module.action_space.n)) > 0))

    return values


__all__ = ["MMDCriticLearner", "mmd_learner"]
