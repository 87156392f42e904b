"""rl_zoo3's Python-ish strings are read with ``ast`` as plain data, never evaluated."""

from __future__ import annotations

import pytest

from core.zoo.pyexpr import Name, parse_python_value


def test_dict_calls_lists_names_and_literals_become_plain_data():
    value = parse_python_value("dict(net_arch=dict(pi=[64, 64], vf=[64]), activation_fn=nn.ReLU, log_std_init=-2,"
                               " ortho_init=False, optimizer_kwargs=dict(eps=1e-5), shape=(64, 64), x=None)")
    assert value == {"net_arch": {"pi": [64, 64], "vf": [64]}, "activation_fn": Name("nn.ReLU"), "log_std_init": -2,
                     "ortho_init": False, "optimizer_kwargs": {"eps": 1e-5}, "shape": (64, 64), "x": None}
    assert parse_python_value("{'norm_obs': True, 'clip_obs': 5.0}") == {"norm_obs": True, "clip_obs": 5.0}
    assert parse_python_value("th.optim.AdamW") == Name("th.optim.AdamW")


@pytest.mark.parametrize("text", ["__import__('os').system('touch pwned')", "dict(a=open('pwned', 'w'))",
                                  "dict(a=1 + 2)", "lambda: 1", "dict(**other)", "{**other}", "dict(a=[x for x in y])",
                                  "dict(a=", "nn.ReLU()"])
def test_anything_but_plain_data_is_refused_unevaluated(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError):
        parse_python_value(text)
    assert not (tmp_path / "pwned").exists()


def test_huge_text_is_refused():
    with pytest.raises(ValueError, match="longer than"):
        parse_python_value("[" + "1, " * 20_000 + "]")
