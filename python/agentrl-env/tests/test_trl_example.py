"""The TRL example (examples/trl_grpo_alfworld.py) trains through a real `agentrl env serve`.

Needs TRL and PyTorch 2, which CI's environment leaves out (about 6 GB): there the module is
skipped with one line. `AGENTRL_PYTHON_REQUIREMENTS=python/requirements-trl.txt bash .ci/python.sh`
runs it.
"""

from __future__ import annotations

import json
import math
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

HOW = "run AGENTRL_PYTHON_REQUIREMENTS=python/requirements-trl.txt bash .ci/python.sh for the TRL example's test"
pytest.importorskip("trl", reason=f"TRL is not installed: {HOW}")
torch = pytest.importorskip("torch", reason=f"PyTorch is not installed: {HOW}")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip(
        f"PyTorch {torch.__version__} is older than 2 (TRL needs 2): {HOW}", allow_module_level=True
    )

from conftest import Server  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import trl_grpo_alfworld as example  # noqa: E402

# The households the example's README serves: two storage receptacles, one distractor, 10 steps.
TINY = [
    "env.options.source=generated",
    "env.options.generator.storageReceptacles=2",
    "env.options.generator.distractors=1",
    "env.options.generator.extraTargets=0",
    "env.options.maxSteps=10",
]


@pytest.fixture(scope="module")
def tiny_server() -> Iterator[Server]:
    server = Server("alfworld", TINY)
    yield server
    assert server.stop() == 0


def sessions(url: str) -> int:
    with urllib.request.urlopen(f"{url}/health", timeout=30) as reply:
        return int(json.load(reply)["sessions"])


def test_the_warm_up_learns_only_the_assistant_turns_of_a_chat(tiny_server) -> None:
    options = example.Options(url=tiny_server.url, warmup_episodes=4, warmup_turns=2)
    chats = example.collect_warmup_chats(options)
    assert len(chats) == 4 and all(chat[-1]["role"] == "tool" for chat in chats)
    tokenizer = example.build_tokenizer(chats, options.vocab_size)
    ids, labels = example.warmup_example(tokenizer, chats[0], [example.act_tool()])
    assert len(ids) == len(labels)
    learned = [i for i, label in zip(ids, labels) if label != -100]
    text = tokenizer.decode(learned)
    action = chats[0][2]["tool_calls"][0]["function"]["arguments"]["action"]
    assert text.count("<tool_call>") == 2 and text.count("<|im_end|>") == 2
    assert f'"action": "{action}"' in text
    assert "Admissible actions" not in text and "Welcome to TextWorld" not in text
    assert tokenizer.decode(ids) == tokenizer.apply_chat_template(
        chats[0], tools=[example.act_tool()], tokenize=False
    )


def test_grpo_trains_a_step_whose_rollouts_act_in_the_served_env(tiny_server) -> None:
    report = example.main(
        [
            "--url",
            tiny_server.url,
            "--steps",
            "1",
            "--batch",
            "4",
            "--generations",
            "2",
            "--max-turns",
            "4",
            "--max-completion-tokens",
            "768",
            "--warmup-episodes",
            "16",
            "--warmup-steps",
            "120",
        ]
    )
    assert report.warmup_loss_last < report.warmup_loss_first / 4, "the warm-up learns the format"
    assert len(report.steps) == 1
    step = report.steps[0]
    assert step.rollouts == 4
    assert step.turns_mean > 0, "the rollouts called act: their actions went over the wire"
    assert 0.0 <= step.admissible_mean <= 1.0 and step.wins <= step.rollouts
    assert step.env_reward_mean == 10.0 * step.wins / step.rollouts
    assert step.loss is not None and math.isfinite(step.loss)
    assert sessions(tiny_server.url) == 0, "every rollout's session was closed"


def test_a_batch_that_is_not_a_multiple_of_the_group_is_refused() -> None:
    with pytest.raises(SystemExit):
        example.parse_options(["--batch", "5", "--generations", "2"])
