"""An environment class for TRL's ``GRPOTrainer(environment_factory=...)``.

TRL builds one instance per rollout from a zero-argument factory, calls ``reset(**row)`` with the
dataset row's columns before generation (the returned text is appended to the prompt), offers
every other public method to the model as a tool, and passes the instances to reward functions
as ``environments=[...]``; a ``get_reward()`` method is its own reward source (TRL 1.16). So this
class has one tool, ``act(action)``, keeps its reward and ``won`` as attributes, returns the
reward from ``get_reward``, and holds one WebSocket session (opened lazily in ``reset``) per instance:
serve with ``server.maxSessions`` at least TRL's generation batch size.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional

from .client import AgentRLEnvClient, AgentRLObservation, reset_kwargs


def render_observation(observation: AgentRLObservation) -> str:
    """The text the model reads: the env's text, then the admissible actions where listed."""
    if not observation.admissible_actions:
        return observation.text
    return f"{observation.text}\n\nAdmissible actions: {', '.join(observation.admissible_actions)}"


class AgentRLEnvironment:
    """One episode of an agentrl env per rollout, played through the ``act`` tool.

    Dataset rows may carry ``seed`` (default 0) and ``task`` (an index or name, e.g. ALFWorld's
    game path relative to the data folder) columns; other columns (``prompt``...) are ignored.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000") -> None:
        self._base_url = base_url
        self._client: Optional[Any] = None
        #: Sum of the env's rewards over the episode so far.
        self.reward: float = 0.0
        #: Whether the task has been achieved.
        self.won: bool = False
        #: Whether the episode has ended (then ``act`` raises).
        self.done: bool = False
        #: The latest observation.
        self.observation: Optional[AgentRLObservation] = None
        #: Actions taken in this episode.
        self.turns: int = 0
        #: Actions that were not among the admissible actions listed with the observation they
        #: answered (the env still takes them: ALFWorld answers "Nothing happens.").
        self.inadmissible_turns: int = 0

    def reset(self, **row: Any) -> str:
        if self._client is None:
            self._client = AgentRLEnvClient(base_url=self._base_url).sync()
        task = row.get("task")
        result = self._client.reset(**reset_kwargs(int(row.get("seed", 0) or 0), task))
        self.reward, self.won, self.done, self.turns = 0.0, False, False, 0
        self.inadmissible_turns = 0
        self.observation = result.observation
        return render_observation(result.observation)

    def act(self, action: str) -> str:
        """Takes one action in the environment and returns what the agent sees next.

        Args:
            action: The command to run, written exactly as one of the admissible actions.

        Returns:
            The new observation, followed by the admissible actions.
        """
        if self._client is None:
            raise ValueError("The environment has not been reset.")
        if self.done:
            raise ValueError("The episode is over: no more actions are accepted.")
        listed = self.observation.admissible_actions if self.observation is not None else None
        if listed and action not in listed:
            self.inadmissible_turns += 1
        result = self._client.step(action)
        self.turns += 1
        self.reward += result.reward or 0.0
        self.done = result.done
        self.won = result.observation.won
        self.observation = result.observation
        text = render_observation(result.observation)
        return f"{text}\n\nThe episode is over." if self.done else text

    def get_reward(self) -> float:
        """The episode's summed env reward (ALFWorld: 10 on a win). TRL calls it once per finished
        rollout as a reward of its own (weight 1, named after this class), not as a tool."""
        return self.reward

    def _close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:
            pass


def environment_factory(base_url: str) -> Callable[[], AgentRLEnvironment]:
    """The zero-argument factory TRL takes: ``GRPOTrainer(environment_factory=environment_factory(url))``."""
    return functools.partial(AgentRLEnvironment, base_url)


def env_reward(environments: List[AgentRLEnvironment], **_: Any) -> List[float]:
    """A TRL reward function: each rollout's summed env reward (ALFWorld: 10 on a win)."""
    return [env.reward for env in environments]
