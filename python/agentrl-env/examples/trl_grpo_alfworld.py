"""TRL's GRPO on the CPU, training through ``agentrl env serve --env alfworld``.

A tiny causal LM (a two-layer Qwen2 configuration, randomly initialised) and a byte-level BPE
tokenizer trained here on the server's own observations (no model hub is needed) play ALFWorld
households served over OpenEnv's protocol, one WebSocket session per rollout, through
``agentrl_env.AgentRLEnvironment`` and TRL's ``GRPOTrainer(environment_factory=...)``.

A randomly initialised model never writes a well-formed tool call, so no episode would ever take
a step. A short supervised warm-up first teaches the format only: chats whose assistant turns call
``act`` with an admissible action drawn at random (seeded). It teaches nothing about winning.
GRPO then trains on two reward columns: the env's own (``get_reward``: ALFWorld gives 10 on a
win) and ``admissible``, the fraction of the episode's actions that were among the actions the
env had just listed.

Run (a server first, see the README beside this file)::

    python trl_grpo_alfworld.py --url http://127.0.0.1:8000

Every random choice is seeded (``--seed``): the warm-up actions, the model's initial weights and
TRL's sampling.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch
from datasets import Dataset
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    PreTrainedTokenizerFast,
    PrinterCallback,
    Qwen2Config,
    Qwen2ForCausalLM,
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template

from agentrl_env import (
    AgentRLEnvClient,
    AgentRLEnvironment,
    environment_factory,
    render_observation,
)

SYSTEM = (
    "You are an agent in a text household. Call the act tool with one of the admissible "
    "actions, one call per turn, until the task is done."
)
USER = "Play this game.\n\n"
# Qwen2.5's tokens as its chat template writes them: the first three end or frame turns (special:
# left out when decoding for display); the tool-call markers must survive decoding, since TRL's
# response parser reads them.
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


@dataclass
class Options:
    """What the example runs; the command line sets each (``--help``)."""

    url: str = "http://127.0.0.1:8000"
    seed: int = 0
    #: GRPO optimiser steps.
    steps: int = 4
    #: Rollouts per task (GRPO's group size G).
    generations: int = 4
    #: Rollouts per step (a multiple of ``generations``).
    batch: int = 8
    #: The most tool calls (env actions) per rollout.
    max_turns: int = 10
    #: The most tokens of one rollout after its prompt (model text and tool replies).
    max_completion_tokens: int = 1536
    learning_rate: float = 1e-4
    #: Warm-up: episodes of random admissible actions (seeds 0..n-1), actions per episode, steps.
    warmup_episodes: int = 48
    warmup_turns: int = 6
    warmup_steps: int = 600
    warmup_learning_rate: float = 3e-3
    vocab_size: int = 1024
    hidden_size: int = 64
    layers: int = 2
    #: GRPO's tasks are seeds ``task_seed_offset + i`` (apart from the warm-up's).
    task_seed_offset: int = 10_000
    #: Torch's CPU threads: one is fastest for a model this small, and far faster on a busy
    #: machine, where idle threads of a larger pool spin for cores others are using.
    threads: int = 1
    output_dir: Optional[str] = None


@dataclass
class StepRecord:
    """One GRPO step as this example reports it."""

    step: int
    rollouts: int
    wins: int
    env_reward_mean: float
    admissible_mean: float
    turns_mean: float
    loss: Optional[float] = None


@dataclass
class Report:
    """What a run did: the warm-up, each GRPO step, and how long each phase took."""

    warmup_loss_first: float = 0.0
    warmup_loss_last: float = 0.0
    warmup_seconds: float = 0.0
    train_seconds: float = 0.0
    steps: List[StepRecord] = field(default_factory=list)


def parse_options(argv: Optional[Sequence[str]] = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in asdict(Options()).items():
        kind: Callable[[str], Any] = type(default) if default is not None else str
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default)
    options = Options(**vars(parser.parse_args(argv)))
    if options.batch % options.generations != 0:
        parser.error(
            f"--batch {options.batch} is not a multiple of --generations {options.generations}"
        )
    return options


def act_tool() -> Callable[..., str]:
    """The ``act`` method TRL offers the model (its schema comes from the signature and docstring)."""
    return AgentRLEnvironment().act


def prompt_messages() -> List[Dict[str, str]]:
    """The dataset's prompt; TRL appends the env's first observation (``reset``) to its last message."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]


def tool_call(action: str) -> Dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {"type": "function", "function": {"name": "act", "arguments": {"action": action}}}
        ],
    }


def collect_warmup_chats(options: Options) -> List[List[Dict[str, Any]]]:
    """Chats of random admissible actions over the wire: the tokenizer's corpus and the warm-up's data."""
    rng = random.Random(options.seed)
    chats: List[List[Dict[str, Any]]] = []
    with AgentRLEnvClient(base_url=options.url).sync() as env:
        for seed in range(options.warmup_episodes):
            result = env.reset(seed=seed)
            messages: List[Dict[str, Any]] = prompt_messages()
            messages[-1] = {
                "role": "user",
                "content": USER + render_observation(result.observation),
            }
            for _ in range(options.warmup_turns):
                actions = result.observation.admissible_actions or ["look"]
                action = rng.choice(actions)
                messages.append(tool_call(action))
                result = env.step(action)
                reply = render_observation(result.observation)
                messages.append({"role": "tool", "name": "act", "content": reply})
                if result.done:
                    break
            chats.append(messages)
    return chats


def wrap_tokenizer(tokenizer: Tokenizer) -> PreTrainedTokenizerFast:
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    fast.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    fast.chat_template = qwen2_5_chat_template
    return fast


def empty_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def build_tokenizer(chats: List[List[Dict[str, Any]]], vocab_size: int) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on the chats as Qwen2.5's template renders them (tools included)."""
    bootstrap = empty_tokenizer()
    bootstrap.add_special_tokens(SPECIAL_TOKENS)
    renderer = wrap_tokenizer(bootstrap)
    tools = [act_tool()]
    texts = [str(renderer.apply_chat_template(chat, tools=tools, tokenize=False)) for chat in chats]
    tokenizer = empty_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return wrap_tokenizer(tokenizer)


def build_model(tokenizer: PreTrainedTokenizerFast, options: Options) -> Qwen2ForCausalLM:
    """A randomly initialised two-layer Qwen2 (seeded)."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.pad_token_id
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=options.hidden_size,
        intermediate_size=4 * options.hidden_size,
        num_hidden_layers=options.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=end,
        pad_token_id=pad,
        bos_token_id=None,
    )
    torch.manual_seed(options.seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = end
    model.generation_config.pad_token_id = pad
    model.generation_config.bos_token_id = None
    return model


def chat_ids(
    tokenizer: PreTrainedTokenizerFast, messages: List[Dict[str, Any]], tools: list, prompt: bool
) -> List[int]:
    text = str(
        tokenizer.apply_chat_template(
            messages, tools=tools, tokenize=False, add_generation_prompt=prompt
        )
    )
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def warmup_example(
    tokenizer: PreTrainedTokenizerFast, chat: List[Dict[str, Any]], tools: list
) -> tuple:
    """Token ids of a chat and labels that keep only the assistant turns (-100 elsewhere)."""
    ids = chat_ids(tokenizer, chat, tools, prompt=False)
    labels = [-100] * len(ids)
    for j, message in enumerate(chat):
        if message["role"] != "assistant":
            continue
        start = len(chat_ids(tokenizer, chat[:j], tools, prompt=True))
        end = len(chat_ids(tokenizer, chat[: j + 1], tools, prompt=False))
        labels[start:end] = ids[start:end]
    return ids, labels


def warm_up(
    model: Qwen2ForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    chats: List[List[Dict[str, Any]]],
    options: Options,
    report: Report,
) -> None:
    """Supervised steps on the warm-up chats (one chat a step, in a seeded order)."""
    tools = [act_tool()]
    examples = [warmup_example(tokenizer, chat, tools) for chat in chats]
    order = random.Random(options.seed + 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.warmup_learning_rate)
    model.train()
    losses: List[float] = []
    for step in range(options.warmup_steps):
        ids, labels = examples[order.randrange(len(examples))]
        out = model(input_ids=torch.tensor([ids]), labels=torch.tensor([labels]))
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(out.loss.item())
        if step % 50 == 0 or step == options.warmup_steps - 1:
            print(
                f"warm-up step {step + 1}/{options.warmup_steps}: loss {losses[-1]:.3f}", flush=True
            )
    window = max(1, min(20, len(losses) // 5))
    report.warmup_loss_first = sum(losses[:window]) / window
    report.warmup_loss_last = sum(losses[-window:]) / window


def admissible(environments: List[AgentRLEnvironment], **_: Any) -> List[float]:
    """A TRL reward function: the fraction of a rollout's actions the env had listed (0 without actions)."""
    return [
        (env.turns - env.inadmissible_turns) / env.turns if env.turns else 0.0
        for env in environments
    ]


class EpisodeLog:
    """A reward function of weight 0 that records each step's episodes (TRL has no other hook that sees them)."""

    __name__ = "episodes"

    def __init__(self) -> None:
        self.steps: List[StepRecord] = []

    def __call__(self, environments: List[AgentRLEnvironment], **_: Any) -> List[float]:
        n = len(environments)
        self.steps.append(
            StepRecord(
                step=len(self.steps) + 1,
                rollouts=n,
                wins=sum(env.won for env in environments),
                env_reward_mean=sum(env.reward for env in environments) / n,
                admissible_mean=sum(admissible(environments)) / n,
                turns_mean=sum(env.turns for env in environments) / n,
            )
        )
        return [0.0] * n


class PrintSteps(TrainerCallback):
    """Prints one line per GRPO step: what the episodes did and TRL's loss."""

    def __init__(self, log: EpisodeLog) -> None:
        self.log = log

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: Optional[Dict[str, float]] = None,
        **_: Any,
    ) -> None:
        if not logs or "loss" not in logs or not self.log.steps:
            return
        record = self.log.steps[-1]
        record.loss = float(logs["loss"])
        print(
            f"GRPO step {state.global_step}: {record.rollouts} rollouts, {record.wins} won, "
            f"env reward {record.env_reward_mean:.2f}, admissible {record.admissible_mean:.2f}, "
            f"actions {record.turns_mean:.1f}, tool calls/rollout {logs.get('tools/call_frequency', 0.0):.2f}, "
            f"loss {record.loss:.4f}",
            flush=True,
        )


def train(options: Options) -> Report:
    torch.set_num_threads(options.threads)
    # TRL warns that environment_factory is experimental; this example's README says so itself.
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    report = Report()
    started = time.perf_counter()
    chats = collect_warmup_chats(options)
    tokenizer = build_tokenizer(chats, options.vocab_size)
    model = build_model(tokenizer, options)
    print(
        f"tokenizer: {len(tokenizer)} tokens; model: {sum(p.numel() for p in model.parameters()):,} parameters "
        f"({options.layers} layers, hidden {options.hidden_size}), randomly initialised",
        flush=True,
    )
    warm_up(model, tokenizer, chats, options, report)
    report.warmup_seconds = time.perf_counter() - started

    tasks = options.steps * options.batch // options.generations
    dataset = Dataset.from_dict(
        {
            "prompt": [prompt_messages()] * tasks,
            "seed": [options.task_seed_offset + i for i in range(tasks)],
        }
    )
    log = EpisodeLog()
    with tempfile.TemporaryDirectory() as scratch:
        args = GRPOConfig(
            output_dir=options.output_dir or scratch,
            max_steps=options.steps,
            per_device_train_batch_size=options.batch,
            num_generations=options.generations,
            max_completion_length=options.max_completion_tokens,
            max_tool_calling_iterations=options.max_turns,
            learning_rate=options.learning_rate,
            temperature=1.0,
            beta=0.0,
            reward_weights=[
                1.0,
                0.0,
            ],  # admissible, the episode log (TRL adds the env's get_reward, weight 1)
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=options.seed,
            disable_tqdm=True,
            shuffle_dataset=False,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[admissible, log],
            train_dataset=dataset,
            environment_factory=environment_factory(options.url),
            args=args,
            callbacks=[PrintSteps(log)],
        )
        trainer.remove_callback(PrinterCallback)  # PrintSteps prints each step instead
        began = time.perf_counter()
        trainer.train()
        report.train_seconds = time.perf_counter() - began
        for pool in trainer._environment_pool.values():
            for env in pool:
                env._close()
    report.steps = log.steps
    return report


def main(argv: Optional[Sequence[str]] = None) -> Report:
    options = parse_options(argv)
    report = train(options)
    print(json.dumps(asdict(report)), file=sys.stdout, flush=True)
    return report


if __name__ == "__main__":
    main()
