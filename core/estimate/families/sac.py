"""SB3's SAC, counted without torch (read from SB3 2.x): an actor (latent_pi stack, ``mu`` and ``log_std``
Linear heads; with gSDE ``log_std`` is a (latent, action_dim) parameter), the critics and their target
(``off_policy``), separate Adam optimizers for actor and critic, and ``log_ent_coef`` (one float with
its own Adam) when ``ent_coef`` is ``auto``."""

from __future__ import annotations

from core.config.algorithms.crossq import CrossQParams
from core.config.algorithms.sac import SACParams
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.family import policy_inputs
from core.estimate.families.off_policy import ActorQCritics
from core.estimate.networks import ModelShape, Network, Optimizer, network


class Sac(ActorQCritics):
    network = "sac"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        inputs = policy_inputs(cfg, spaces)
        critic, target = self.critics(cfg, spaces, inputs)
        cnn, feats, act = inputs.cnn, inputs.features, spaces.action_dim
        pi = tuple(inputs.arch.get("pi", []))
        latent = pi[-1] if pi else feats
        cnn_params, cnn_tensors = (cnn.params, cnn.tensors) if cnn else (0, 0)
        p = cfg.params
        assert isinstance(p, SACParams | CrossQParams)  # SAC, TQC (SACParams) and CrossQ answer as this family
        if p.use_sde:  # mu head + a (latent, action_dim) log_std parameter (full_std)
            actor = network("actor", [(feats, *pi, act)], extra_params=latent * act + cnn_params,
                            extra_tensors=1 + cnn_tensors)
        else:  # mu and log_std heads
            actor = network("actor", [(feats, *pi, act)], extra_params=latent * act + act + cnn_params,
                            extra_tensors=2 + cnn_tensors)
        nets = [actor, critic, target]
        opts = [Optimizer("actor", inputs.optimizer, actor.params, actor.tensors),
                Optimizer("critic", inputs.optimizer, critic.params, critic.tensors)]
        if isinstance(p.ent_coef, str):  # "auto" / "auto_0.1": a learned log_ent_coef (always Adam)
            nets.append(Network("log_ent_coef", 1, 1, True))
            opts.append(Optimizer("ent_coef", "adam", 1, 1))
        return ModelShape(tuple(nets), tuple(opts), cnn)
