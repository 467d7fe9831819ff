"""TRL's GRPOTrainer on a mage trial, through OpenEnv and through our in-process adapter.

Each rollout is a 2-episode Kuhn poker trial against the always-pass style (the same deal twice,
a reflection between the hands), played by the tiny model through one `move` tool; the reward is
the trial's return (an invalid answer costs 1; -1 more for a trial left unfinished). The script
starts `python -m baselines.run serve-env` on 127.0.0.1, trains through it with TRL's
`environment_factory` (TRL's way to OpenEnv), trains again in process, and prints both runs'
mean trial return per step: both doors give the model the same pages, so the runs are the same
(docs/interop.md).
"""

import subprocess
import sys

import torch
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from mage_agents.interop import openenv_trial_environment
from mage_agents.tiny_model import build_tiny_model
from mage_agents.training import trial_environment

ENV_ID = "mage/KuhnPoker-v0"
# Settings a client may choose (mage_agents.interop.CLIENT_SETTINGS): any Kuhn server will do.
TRIAL = {"num_episodes": 2, "opponent": "always-pass", "seat": "first"}
RULES = {"invalid_action_penalty": 1.0, "max_invalid_actions": 2}


def train(factory, output_dir: str) -> tuple[list[dict], list[torch.Tensor]]:
    """Train the tiny model 20 steps on the trials of `factory`; return the logs and weights."""
    model, tokenizer = build_tiny_model(seed=0)  # built in code: nothing is downloaded
    prompt = [{"role": "user", "content": "Play Kuhn poker."}]  # the trial's text follows it
    rows = Dataset.from_list([{"prompt": prompt, "seed": seed} for seed in range(512)])
    config = GRPOConfig(
        output_dir=output_dir,
        per_device_train_batch_size=32,  # 4 deals x 8 trials
        num_generations=8,
        max_completion_length=48,  # all the turns of a trial together
        max_tool_calling_iterations=6,
        learning_rate=1e-2,
        lr_scheduler_type="constant",
        max_steps=20,
        logging_steps=1,
        bf16=False,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        train_dataset=rows,
        processing_class=tokenizer,
        environment_factory=factory,
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    return logs, [p.detach().clone() for p in model.parameters()]


torch.set_num_threads(1)  # two threads on two busy cores made steps 40x slower
command = [sys.executable, "-m", "baselines.run", "serve-env", ENV_ID, "--port=0"]
server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().split(" on ")[-1].strip()  # "serving ... on http://127.0.0.1:PORT"
try:
    # One session per rollout of a step (32 here): serve-env allows 64 by default.
    remote_logs, remote_weights = train(
        openenv_trial_environment(url, **RULES, **TRIAL), "runs/trl-openenv-kuhn"
    )
finally:
    server.terminate()
local_logs, local_weights = train(trial_environment(ENV_ID, **RULES, **TRIAL), "runs/trl-kuhn")

print("mean trial return per step\nstep  OpenEnv  in process  grad norm")
for remote, local in zip(remote_logs, local_logs, strict=True):
    print(
        f"{remote['step']:4d}  {remote['reward']:+7.3f}  {local['reward']:+10.3f}"
        f"  {remote['grad_norm']:9.3f}"
    )
same = all(torch.equal(a, b) for a, b in zip(remote_weights, local_weights, strict=True))
print(f"the two doors trained the same weights: {same}")
