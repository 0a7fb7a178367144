"""The typed client, the TRL environment class and the verl-agent env package against a real server."""

from __future__ import annotations

import inspect

import pytest

from agentrl_env import (
    AgentRLEnvClient,
    AgentRLEnvironment,
    AgentRLObservation,
    build_alfworld_envs,
    env_reward,
    environment_factory,
)


def test_the_typed_client_reads_observations_state_and_errors(generated_server) -> None:
    with AgentRLEnvClient(base_url=generated_server.url).sync() as env:
        first = env.reset(seed=4)
        assert isinstance(first.observation, AgentRLObservation)
        assert first.reward is None and first.done is False
        assert first.observation.anchor == first.observation.text
        assert first.observation.admissible_actions
        assert first.observation.info["gamePath"] == "generated:4"
        action = first.observation.admissible_actions[0]
        step = env.step(action)
        assert step.reward == 0.0 and step.observation.metrics["steps"] == 1
        state = env.state()
        assert (state.seed, state.step_count, state.env, state.done) == (4, 1, "alfworld/text-v1", False)
        with pytest.raises(TypeError):
            env.step({"action": action})  # type: ignore[arg-type]
    with AgentRLEnvClient(base_url=generated_server.url).sync() as again:
        assert again.reset(seed=4).observation == first.observation, "same seed, same episode"


def test_the_trl_environment_exposes_one_documented_tool_and_keeps_reward_and_won(
    generated_server,
) -> None:
    make = environment_factory(generated_server.url)
    env = make()
    # As TRL 1.16's GRPOTrainer reads an environment class: its functions, minus reset,
    # get_reward (a reward source) and private names, are the tools.
    tools = [
        name
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]
    assert tools == ["act"]
    assert "Args:" in (env.act.__doc__ or "") and inspect.signature(env.act).parameters["action"].annotation in (str, "str")
    text = env.reset(prompt=[{"role": "user", "content": "play"}], seed=2)
    assert "Your task is to: " in text and "Admissible actions: " in text
    assert env.observation is not None
    for _ in range(60):
        if env.done:
            break
        reply = env.act(env.observation.admissible_actions[-1])
        assert isinstance(reply, str)
    assert env.turns > 0 and env.inadmissible_turns == 0
    assert env_reward([env]) == [env.reward] == [env.get_reward()]
    if env.done:
        with pytest.raises(ValueError, match="over"):
            env.act("look")
    env.reset(seed=2)
    assert env.turns == 0
    env.act("fly to the moon")
    env.act(env.observation.admissible_actions[0])
    assert (env.turns, env.inadmissible_turns) == (2, 1), "an action the env had not listed is counted"
    env._close()


def test_the_verl_agent_envs_give_groups_one_task_anchors_and_skip_finished_slots(
    generated_server,
) -> None:
    envs = build_alfworld_envs(
        None, seed=7, env_num=3, group_n=2, env_kwargs={"base_url": generated_server.url}
    )
    try:
        text_obs, image_obs, infos = envs.reset()
        assert image_obs is None and len(text_obs) == len(infos) == 6
        for g in range(3):
            assert text_obs[2 * g] == text_obs[2 * g + 1], "a group shares its task"
        assert text_obs[0] != text_obs[2]
        assert [i["anchor"] for i in infos] == text_obs
        assert infos[0]["extra.gamefile"] == "generated:7"
        admissible = envs.get_admissible_commands
        assert len(admissible) == 6 and all(admissible)
        # Slot 0 ends its episode (a truncation is enough): play its first admissible action until done.
        seen_done = False
        for _ in range(60):
            actions = [a[0] for a in envs.get_admissible_commands]
            text_obs, _, rewards, dones, infos = envs.step(actions)
            assert len(rewards) == len(dones) == 6
            if all(dones):
                seen_done = True
                break
        assert seen_done, "every slot ends within the env's maxSteps"
        text_obs, _, rewards, dones, infos = envs.step(["look"] * 6)
        assert rewards == [0.0] * 6 and all(dones), "finished slots are not stepped again"
        _, _, again = envs.reset()
        assert [i["extra.gamefile"] for i in again[::2]] == ["generated:10", "generated:11", "generated:12"]
    finally:
        envs.close()
