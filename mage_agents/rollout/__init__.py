"""Rollouts: trials played in lockstep batches, recorded as turns for evaluation and training.

- :class:`Turn` / :class:`Trajectory`: one model call / one trial (JSON in and out).
- :class:`TrialPlan`, :class:`TrialPlanner`, :class:`TrialPlans` and :func:`plan_groups`: which
  trials to play, made on demand; a group is K trials of the same task seed and opponent draw
  (:func:`group_id`), each agent seeded by :func:`agent_seed`.
- :func:`rollout` / :func:`collect`: the one lockstep engine the runner and the trainer share,
  with the envs optionally stepped in worker processes (``env_workers``); a trial the backend
  gave no answer to stops, flagged ``incomplete`` (:func:`collect` raises
  :class:`BackendFailure` unless told to keep it).
- :func:`transcript` and :class:`TranscriptFile`: what the agent read and wrote in a trial, one
  JSON value per trial, stored as one gzip member each (crash-safe, resumable).
"""

from mage_agents.rollout.engine import (
    MAX_STEPS_PER_TRIAL,
    BackendFailure,
    collect,
    rollout,
    shown_move,
)
from mage_agents.rollout.envs import LocalEnvs, WorkerEnvs
from mage_agents.rollout.plan import (
    TrialPlan,
    TrialPlanner,
    TrialPlans,
    agent_seed,
    group_id,
    make_trial_env,
    plan_groups,
    settings_digest,
    with_trial,
)
from mage_agents.rollout.transcript import agent_view, pages, transcript
from mage_agents.rollout.transcript_file import TranscriptFile, read_transcripts, write_transcripts
from mage_agents.rollout.types import Trajectory, Turn, load_trajectories, save_trajectories

__all__ = [
    "Turn",
    "Trajectory",
    "save_trajectories",
    "load_trajectories",
    "TrialPlan",
    "TrialPlanner",
    "TrialPlans",
    "agent_seed",
    "group_id",
    "settings_digest",
    "plan_groups",
    "with_trial",
    "make_trial_env",
    "rollout",
    "collect",
    "BackendFailure",
    "shown_move",
    "MAX_STEPS_PER_TRIAL",
    "WorkerEnvs",
    "LocalEnvs",
    "transcript",
    "agent_view",
    "pages",
    "TranscriptFile",
    "read_transcripts",
    "write_transcripts",
]
