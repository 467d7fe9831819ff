"""TRL's GRPOTrainer on a mage trial through OpenEnv, or through our in-process adapter.

    python examples/train_with_trl_openenv.py                   # starts serve-env, trains over it
    python examples/train_with_trl_openenv.py --url http://127.0.0.1:8000   # your running server
    python examples/train_with_trl_openenv.py --door in-process   # the same trial, no server

Each rollout is a 2-episode Kuhn poker trial against the always-pass style (the same deal twice,
a reflection between the hands), played by the tiny model through one `move` tool; the reward is
the trial's return (an invalid answer costs 1; -1 more for a trial left unfinished). Both doors
give the model the same pages, so with the same seed they train the same weights
(docs/interop.md).
"""

import argparse
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


def start_server() -> tuple[subprocess.Popen, str]:
    """Start `python -m baselines.run serve-env` on 127.0.0.1 and return it with its URL."""
    command = [sys.executable, "-m", "baselines.run", "serve-env", ENV_ID, "--port=0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()  # "serving ENV_ID on http://127.0.0.1:PORT"
    if not line.startswith("serving "):
        server.kill()
        sys.exit("serve-env did not start (is the openenv extra installed?)")
    return server, line.split(" on ")[-1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--door", choices=["openenv", "in-process"], default="openenv")
    parser.add_argument("--url", help="a running serve-env server (default: start one)")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    server = None
    if args.door == "in-process":
        factory = trial_environment(ENV_ID, **RULES, **TRIAL)
    else:
        if args.url is None:
            server, args.url = start_server()
        factory = openenv_trial_environment(args.url, **RULES, **TRIAL)

    torch.set_num_threads(1)  # two threads on two busy cores made steps 40x slower
    model, tokenizer = build_tiny_model(seed=0)  # built in code: nothing is downloaded
    prompt = [{"role": "user", "content": "Play Kuhn poker."}]  # the trial's text follows it
    rows = Dataset.from_list([{"prompt": prompt, "seed": seed} for seed in range(512)])
    config = GRPOConfig(
        output_dir="runs/trl-openenv-kuhn",
        per_device_train_batch_size=32,  # 4 deals x 8 trials
        num_generations=8,
        max_completion_length=48,  # all the turns of a trial together
        max_tool_calling_iterations=6,
        learning_rate=1e-2,
        lr_scheduler_type="constant",
        max_steps=args.steps,
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
    try:
        trainer.train()
    finally:
        if server is not None:
            server.terminate()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(
                f"step {entry['step']:2d}  mean trial return {entry['reward']:+.3f}  "
                f"grad norm {entry['grad_norm']:.3f}"
            )


if __name__ == "__main__":
    main()
