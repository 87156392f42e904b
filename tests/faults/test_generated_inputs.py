"""Generated bad inputs (hypothesis) through the real command line: ``--config`` files, ``--set``
values, plans and ``presets import`` (then ``presets show`` and ``--preset``). Every case ends as a
valid config or a clear error of a few lines: never a traceback, never a hang, never a memory
blow-up. Each case runs under a time limit (SIGALRM) and an address-space limit (RLIMIT_AS).
"""

from __future__ import annotations

import contextlib
import random
import resource
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli.main import main
from core.config.errors import SHOWN_ISSUES
from tests.faults.conftest import EXAMPLES, SEED, TALLY

CASE_SECONDS = 20
CASE_EXTRA_MEMORY = 1 << 30  # bytes of address space a case may add to what the test process already maps
MAX_ERROR_LINES = SHOWN_ISSUES + 2

KEYS = ["algo", "env", "id", "entry_point", "kwargs", "ppo", "sac", "a2c", "dqn", "runtime", "budget", "policy",
        "net_arch", "learning_rate", "n_steps", "batch_size", "gamma", "ent_coef", "n_envs", "device",
        "total_timesteps", "checkpoint_every", "keep_checkpoints", "episodes", "name", "base", "description", "seed",
        "normalize", "obs", "reward", "jobs", "parallel", "after", "set", "preset", "timesteps", "on_failure"]
PATHS = ["ppo.learning_rate", "ppo.n_steps", "sac.ent_coef", "policy.net_arch", "env.kwargs", "env.id", "budget.total_timesteps",
         "runtime.n_envs", "runtime.device", "dqn.buffer_size", "a2c.gamma", "name", "seed", "budget.keep_checkpoints"]
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=False, database=None,
                    suppress_health_check=list(HealthCheck))


class Hang(Exception):
    pass


class Valid(Exception):  # noqa: N818 - raised where the command would launch: the config was accepted
    pass


@contextlib.contextmanager
def limited() -> Iterator[None]:
    """SIGALRM after ``CASE_SECONDS``; the address space capped at its size now plus ``CASE_EXTRA_MEMORY``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm", encoding="utf-8") as fh:
        mapped = int(fh.read().split()[0]) * resource.getpagesize()
    cap = mapped + CASE_EXTRA_MEMORY
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)

    def alarm(*_):
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CASE_SECONDS)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def judge(argv: list[str], capsys) -> str:
    """Run the real CLI on ``argv``; 'valid', 'error', or fail the test on a traceback, hang or blow-up."""
    TALLY["inputs tried"] += 1
    try:
        with limited():
            code = main(argv)
    except Valid:
        code = 0
    except Hang:
        TALLY["hangs"] += 1
        pytest.fail(f"over {CASE_SECONDS} s on {argv!r:.300}")
    except MemoryError:
        TALLY["over memory"] += 1
        pytest.fail(f"over the memory limit on {argv!r:.300}")
    except Exception as exc:  # noqa: BLE001 - a traceback is what this suite exists to find
        TALLY["tracebacks"] += 1
        raise AssertionError(f"traceback on {argv!r:.300}: {type(exc).__name__}: {exc!s:.300}") from exc
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if code == 0:
        TALLY["valid configs"] += 1
        return "valid"
    lines = err.strip().splitlines()
    assert lines and len(lines) <= MAX_ERROR_LINES, f"{len(lines)} error lines: {err[:500]}"
    assert all(len(line) <= 2000 for line in lines), "an error line repeats the input instead of naming it"
    TALLY["clear errors"] += 1
    return "error"


# --- strategies -------------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=30), st.sampled_from(["PPO", "SAC", "DQN", "A2C", "random", "CartPole-v1", "auto",
                                                           "cuda", ".nan", "-.inf", "os:system", "con", "nul"]))
keys = st.one_of(st.sampled_from(KEYS), st.text(min_size=1, max_size=12))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                                          st.dictionaries(keys, inner, max_size=8)), max_leaves=40)


@st.composite
def yaml_texts(draw) -> str:
    kind = draw(st.sampled_from(["document", "mutated", "bomb", "deep", "big-string", "many-keys", "junk"]))
    if kind == "document":
        return yaml.safe_dump(draw(documents), default_flow_style=draw(st.booleans()))
    if kind == "mutated":
        text = yaml.safe_dump(draw(documents))
        rng = random.Random(draw(st.integers(0, 2**32)))
        chars = list(text)
        for _ in range(rng.randint(1, 5)):
            chars.insert(rng.randint(0, len(chars)), rng.choice("&*!|>-:[]{}#'\"\t\n%@`"))
        return "".join(chars)
    if kind == "bomb":
        depth, fan = draw(st.integers(3, 12)), draw(st.integers(2, 12))
        lines = [f"a0: &a0 [{', '.join(['lol'] * fan)}]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fan)}]" for i in range(1, depth)]
        return "\n".join(lines) + "\n"
    if kind == "deep":
        n = draw(st.integers(20, 3000))
        indented = "".join(" " * i + "k:\n" for i in range(n))
        return draw(st.sampled_from(["[" * n + "]" * n, "{a: " * n + "1" + "}" * n, indented]))
    if kind == "big-string":
        return f"name: {'x' * draw(st.integers(10_000, 1_500_000))}\n"
    if kind == "many-keys":
        return "".join(f"k{i}: {i}\n" for i in range(draw(st.integers(100, 30_000))))
    return draw(st.text(max_size=300))


@st.composite
def set_texts(draw) -> str:
    path = draw(st.one_of(st.sampled_from(PATHS), st.text(max_size=20)))
    value = draw(st.one_of(yaml_texts().map(lambda t: t.replace("\n", " ") if len(t) < 200_000 else t), st.text(max_size=40)))
    return f"{path}={value}"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "input.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


@contextlib.contextmanager
def no_launch() -> Iterator[None]:
    """Stop where the command would probe the env or start a process: the config was accepted."""
    import core.cli.queue
    import core.cli.train

    def valid(*_a, **_k):
        raise Valid()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core.cli.train, "probe_spaces", valid)
        mp.setattr(core.cli.queue, "start_queue", valid)
        yield


# --- the cases --------------------------------------------------------------------------------

@SETTINGS
@given(text=yaml_texts(), seed=st.just(SEED))
def test_generated_config_files(tmp_path_factory, capsys, text, seed):
    path = write(tmp_path_factory.mktemp("cfg"), text)
    with no_launch():
        judge(["train", "--config", str(path), "--detach"], capsys)


@SETTINGS
@given(items=st.lists(set_texts(), min_size=1, max_size=3))
def test_generated_set_values(capsys, items):
    with no_launch():
        judge(["train", "--detach", *[a for item in items for a in ("--set", item)]], capsys)


@SETTINGS
@given(text=st.one_of(yaml_texts(), documents.map(lambda d: yaml.safe_dump({"jobs": d})),
                      st.lists(st.dictionaries(keys, scalars, max_size=5), max_size=4)
                      .map(lambda j: yaml.safe_dump({"jobs": j}))))
def test_generated_plans(tmp_path_factory, capsys, text):
    path = write(tmp_path_factory.mktemp("plan"), text)
    with no_launch():
        judge(["queue", "run", str(path)], capsys)


@SETTINGS
@given(text=yaml_texts(), name=st.one_of(st.sampled_from(["con", "NUL", "aux", "com1", "lpt9", "ok-name", "../up", ""]),
                                         st.text(max_size=20)))
def test_generated_presets_import_then_show_and_use(tmp_path_factory, capsys, text, name):
    path = write(tmp_path_factory.mktemp("preset"), text)
    if judge(["presets", "import", str(path), "--name", name, "--overwrite"], capsys) == "valid":
        judge(["presets", "show", name], capsys)
        with no_launch():
            judge(["train", "--preset", name, "--detach"], capsys)
    judge(["presets"], capsys)  # the list never breaks
    with no_launch():
        judge(["train", "--preset", "fast", "--detach"], capsys)  # nor does a built-in preset
