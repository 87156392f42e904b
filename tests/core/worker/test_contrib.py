"""sb3-contrib's algorithms (TQC, TRPO, ARS, RecurrentPPO, MaskablePPO, CrossQ) train in real workers,
their settings reach the sb3-contrib objects, a TQC run stops, resumes and appears in the Results
table, and MaskablePPO is refused on an env without action_masks()."""

from __future__ import annotations

import pytest

from core.config.spaces import check_spaces, describe, has_action_masks
from core.config.validate import validate_config
from core.launch.control import launch_worker, resume_run, stop_run
from core.results.table import results
from core.run.status import read_status
from core.util.files import read_json
from tests.core.worker.masked_env import MaskedEnv, UnmaskedEnv
from tests.training_helpers import cli, last_step, make_run, records, run_worker, wait_for, wait_state

pytestmark = pytest.mark.training

MASKED = "tests.core.worker.masked_env:MaskedEnv"
UNMASKED = "tests.core.worker.masked_env:UnmaskedEnv"
SMALL = {"runtime": {"torch_threads": 1}, "budget": {"total_timesteps": 400, "checkpoint_every": 200}}
# a few hundred steps of each, with the networks and batches shrunk to match
RUNS = {
    "TQC": {"env": {"id": "Pendulum-v1"}, "tqc": {"learning_starts": 100, "batch_size": 32, "buffer_size": 2000},
            "policy": {"net_arch": [32, 32]}},
    "TRPO": {"env": {"id": "CartPole-v1"}, "trpo": {"n_steps": 128, "batch_size": 64, "n_critic_updates": 2}},
    "ARS": {"env": {"id": "CartPole-v1"}, "ars": {"n_delta": 2}, "policy": {"net_arch": [16]}},
    "RecurrentPPO": {"env": {"id": "CartPole-v1"}, "recurrentppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 2,
                                                                     "lstm_hidden_size": 16}},
    # evaluated too: an unmasked evaluation would take an invalid action, which MaskedEnv raises on
    "MaskablePPO": {"env": {"entry_point": MASKED}, "maskableppo": {"n_steps": 100, "batch_size": 50, "n_epochs": 2},
                    "budget": {**SMALL["budget"], "eval_every": 200, "eval_episodes": 2}},
    "CrossQ": {"env": {"id": "Pendulum-v1"}, "crossq": {"learning_starts": 100, "batch_size": 32, "buffer_size": 2000},
               "policy": {"net_arch": {"pi": [32, 32], "qf": [64, 64]}}},
}
# a loss each algorithm logs, as the worker records it (ARS has no gradient loss: its step size)
LOGGED = {"TQC": "train/critic_loss", "TRPO": "train/policy_objective", "ARS": "train/step_size",
          "RecurrentPPO": "train/loss", "MaskablePPO": "train/loss", "CrossQ": "train/critic_loss"}


def built(raw: dict):
    """The model as the worker builds it (CPU, envs in-process)."""
    from core.worker.factory import build_model, build_vec_env, wrap_normalize

    cfg = validate_config(raw).config
    # dummy on purpose: the test reads the model's own objects here, in the test process, and trains nothing in
    # a worker (this module's worker runs train through the lean env processes: tests.training_helpers)
    env, _ = build_vec_env(cfg, force_dummy=True)
    return build_model(cfg, wrap_normalize(cfg, env), device="cpu")


@pytest.mark.timeout(1200)  # six workers side by side, twice, on a machine shared under load
def test_each_contrib_algorithm_trains_to_finished_and_resumes_in_a_real_worker(runs_dir):
    runs = {algo: make_run(runs_dir, {"algo": algo, **SMALL, **raw}) for algo, raw in RUNS.items()}
    procs = {algo: launch_worker(run, reap=False) for algo, run in runs.items()}
    for algo, proc in procs.items():
        run = runs[algo]
        assert proc.wait(600) == 0, (run / "worker.log").read_text()
        status = read_status(run)
        assert status.state == "finished", (algo, status.error, (run / "worker.log").read_text()[-3000:])
        assert last_step(run) >= 400, algo
        assert records(run, "episode"), f"{algo} recorded no episode"
        assert any(LOGGED[algo] in r for r in records(run, "train")), (algo, records(run, "train")[-1:])
        assert read_json(run / "checkpoints" / "latest.json")["step"] >= 400
    assert [r["mean_reward"] for r in records(runs["MaskablePPO"], "eval")] == [20.0, 20.0]  # every action valid
    # each goes on from its last checkpoint (model, replay buffer, optimizer) for 200 more steps
    steps = {algo: resume_run(run, 200, reap=False)[0] for algo, run in runs.items()}
    for algo, run in runs.items():
        assert wait_state(run, ("finished", "failed", "crashed"), timeout=600) == "finished", (
            algo, read_status(run).error, (run / "worker.log").read_text()[-3000:])
        assert any(e["message"].startswith(f"resumed from the checkpoint at step {steps[algo]:,}")
                   for e in records(run, "event")), algo
        assert last_step(run) >= steps[algo] + 200, algo


def test_contrib_settings_reach_the_sb3_contrib_objects():
    tqc = built({"algo": "TQC", "env": {"id": "Pendulum-v1"}, "tqc": {"n_quantiles": 10, "top_quantiles_to_drop_per_net": 3},
                 "policy": {"n_critics": 3, "net_arch": [16]}})
    assert tqc.top_quantiles_to_drop_per_net == 3
    assert tqc.critic.n_quantiles == 10 and len(tqc.critic.q_networks) == 3
    lstm = built({"algo": "RecurrentPPO", "env": {"id": "CartPole-v1"},
                  "recurrentppo": {"lstm_hidden_size": 24, "n_lstm_layers": 2, "enable_critic_lstm": False,
                                   "shared_lstm": True, "clip_range_vf": 0.3}})
    assert type(lstm.policy).__name__ == "RecurrentActorCriticPolicy"
    assert lstm.policy.lstm_actor.hidden_size == 24 and lstm.policy.lstm_actor.num_layers == 2 and lstm.policy.shared_lstm
    assert lstm.clip_range_vf(1.0) == pytest.approx(0.3)
    crossq = built({"algo": "CrossQ", "env": {"id": "Pendulum-v1"},
                    "crossq": {"batch_norm_momentum": 0.02, "renorm_warmup_steps": 5, "policy_delay": 2}})
    renorm = [m for m in crossq.critic.modules() if type(m).__name__ == "BatchRenorm1d"]
    assert renorm and renorm[0].momentum == 0.02 and renorm[0].warmup_steps == 5 and crossq.policy_delay == 2
    assert [m.out_features for m in crossq.critic.modules() if type(m).__name__ == "Linear"][:2] == [1024, 1024]
    linear = built({"algo": "ARS", "env": {"id": "Pendulum-v1"}, "ars": {"linear_policy": True, "n_delta": 3, "n_top": 2,
                                                                         "delta_std": "lin_0.1"}})
    assert type(linear.policy).__name__ == "ARSLinearPolicy" and linear.n_delta == 3 and linear.n_top == 2
    assert linear.delta_std_schedule(0.5) == pytest.approx(0.05)
    trpo = built({"algo": "TRPO", "env": {"id": "CartPole-v1"}, "trpo": {"cg_max_steps": 7, "target_kl": 0.02,
                                                                         "sub_sampling_factor": 2}})
    assert (trpo.cg_max_steps, trpo.target_kl, trpo.sub_sampling_factor) == (7, 0.02, 2)


def test_ars_linear_policy_reports_the_network_settings_it_does_not_use():
    warnings = validate_config({"algo": "ARS", "ars": {"linear_policy": True}, "policy": {"net_arch": [32]}}).warnings
    assert any(w.startswith("policy.net_arch: [32] is not applied: ARS's LinearPolicy") for w in warnings), warnings
    assert not validate_config({"algo": "ARS", "policy": {"net_arch": [32]}}).warnings


def test_maskable_ppo_needs_an_env_with_action_masks():
    cfg = validate_config({"algo": "MaskablePPO", "env": {"entry_point": UNMASKED}}).config
    for env, refused in ((UnmaskedEnv(), True), (MaskedEnv(), False)):
        spaces = describe(env.observation_space, env.action_space)
        from dataclasses import replace

        issues = check_spaces(cfg, spaces.action_kind, replace(spaces, action_masks=has_action_masks(env)))
        assert bool(issues) is refused
    [issue] = check_spaces(cfg, "discrete", replace(spaces, action_masks=False))
    assert issue.path == "algo" and "action_masks()" in issue.message and "use PPO" in issue.message
    [issue] = check_spaces(validate_config({"algo": "MaskablePPO"}).config, "box")
    assert "MaskablePPO needs a discrete action space" in issue.message


def test_cli_refuses_maskable_ppo_on_an_env_without_action_masks(runs_dir):
    done = cli("train", "--algo", "maskableppo", "--env", UNMASKED, "--trust", "tests.core.worker.masked_env",
               "--timesteps", "200", "--runs-dir", str(runs_dir))
    assert done.returncode == 2 and "action_masks()" in done.stderr, done.stderr
    assert not any(runs_dir.iterdir()) if runs_dir.exists() else True


def test_a_worker_refuses_maskable_ppo_on_an_env_without_action_masks(runs_dir):
    run = make_run(runs_dir, {"algo": "MaskablePPO", "env": {"entry_point": UNMASKED}, **SMALL})
    assert run_worker(run) != 0
    status = read_status(run)
    assert status.state == "failed" and "action_masks()" in status.error["message"], status


@pytest.mark.timeout(600)  # a worker start, 400 steps, a stop and a resume, on a machine shared under load
def test_tqc_on_pendulum_trains_stops_resumes_and_appears_in_results(runs_dir):
    run = make_run(runs_dir, {"algo": "TQC", "env": {"id": "Pendulum-v1"},
                              "tqc": {"learning_starts": 100, "batch_size": 64, "buffer_size": 20_000},
                              "policy": {"net_arch": [64, 64]}, "budget": {"total_timesteps": 1_000_000}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 400, timeout=300, what="training progress")  # how long to wait, not a check
    assert stop_run(run, timeout=60) == "graceful"
    assert read_status(run).state == "stopped"
    step = read_json(run / "checkpoints" / "latest.json")["step"]
    assert read_json(run / "checkpoints" / "latest.json").get("replay_buffer") or any(
        p.name.endswith("_replay.pkl") for p in (run / "checkpoints").iterdir())
    done = cli("resume", run.name, "--timesteps", "300", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"
    assert any(e["message"].startswith(f"resumed from the checkpoint at step {step:,}") for e in records(run, "event"))
    assert any("with" in e["message"] and "replay buffer" in e["message"] for e in records(run, "event"))
    assert any(k.startswith("train/critic_loss") for r in records(run, "train") for k in r)
    [row] = results([run])
    assert (row.algo, row.env, row.state) == ("TQC", "Pendulum-v1", "finished")
    assert row.timesteps >= step + 300 and row.episodes >= 2


@pytest.mark.timeout(600)
def test_ars_stops_gracefully_and_resumes(runs_dir):
    """ARS ignores a callback's False: the stop reaches it through TrainingHalted, with its episodes recorded."""
    run = make_run(runs_dir, {"algo": "ARS", "env": {"id": "Pendulum-v1"}, "ars": {"n_delta": 2},
                              "budget": {"total_timesteps": 1_000_000, "checkpoint_every": 1000}})
    launch_worker(run)
    wait_for(lambda: last_step(run) >= 2000, timeout=300, what="training progress")
    assert stop_run(run, timeout=60) == "graceful"
    assert wait_state(run, ("stopped",)) == "stopped"
    assert records(run, "episode")
    done = cli("resume", run.name, "--timesteps", "1000", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    assert read_status(run).state == "finished"


BLOCK_CONTRIB = "import sys; sys.modules['sb3_contrib'] = None; from core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def test_cli_refuses_a_contrib_algorithm_where_sb3_contrib_is_missing(runs_dir):
    """sb3_contrib hidden from the import system, as if not installed: the command names the fix, no run is made."""
    import subprocess
    import sys

    from tests.conftest import REPO

    done = subprocess.run([sys.executable, "-c", BLOCK_CONTRIB, "train", "--algo", "tqc", "--env", "Pendulum-v1",
                           "--timesteps", "200", "--runs-dir", str(runs_dir)], capture_output=True, text=True, timeout=240,
                          cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert "TQC comes from sb3-contrib" in done.stderr and 'pip install "rlpanel[contrib]"' in done.stderr
    assert not runs_dir.exists() or not any(runs_dir.iterdir())


def test_ars_records_each_episode_once(runs_dir):
    """The worker reads ARS's episodes from ``ep_info_buffer`` at each rollout's end: that holds only the
    rollout's own (sb3-contrib empties it as each rollout starts), so every Monitor episode is one record."""
    import csv

    from core.run.episodes import episode_count, episode_groups
    from core.util.jsonl import read_jsonl

    run = make_run(runs_dir, {"algo": "ARS", "env": {"id": "CartPole-v1"}, "ars": {"n_delta": 2},
                              "policy": {"net_arch": [16]}, "budget": {"total_timesteps": 3000}})
    assert run_worker(run) == 0 and read_status(run).state == "finished"
    played = 0
    for path in (run / "monitor").glob("*.monitor.csv"):
        with open(path, encoding="utf-8") as fh:
            played += sum(1 for row in csv.reader(line for line in fh if not line.startswith("#")) if row and row[0] != "r")
    recorded = episode_count(episode_groups(read_jsonl(run / "metrics.jsonl")))
    assert played > 40, (played, recorded)  # several rollouts: an episode counted twice would show
    assert recorded == played
