"""Multi-turn GRPO over the dcops OpenEnv server with TRL's ``rollout_func``.

``GRPOTrainer(rollout_func=...)`` (TRL 1.16, experimental) hands generation to a function: it gets the batch's
prompts (each dataset prompt repeated ``num_generations`` times, one entry per rollout) and the trainer, and returns
``prompt_ids``, ``completion_ids`` and ``logprobs`` (one list per entry), optionally ``env_mask`` (1 for tokens the
model wrote, 0 for tokens the environment inserted: they are excluded from the loss) and any other per-rollout
fields, which TRL passes on to the reward functions as keyword arguments.

Here one rollout is one ``cluster/operations`` episode on a running dcops server (``make run``), played through
:class:`dcops.client.DcopsClient` one window per turn: the model answers a window (its ACCEPT / REJECT / DEFER JSON
object, read by the project's strict parser), the server steps, and the window's reward and the next window are
appended to the completion as environment tokens (``env_mask`` 0) before the model answers again. The dataset's
prompt only names the episode (``Episode seed: 1003``); the model's real first prompt is built from the server's
first observation. The reward is the episode's return from the server's step replies plus the per-window format
term (``dcops.training.scheduler.trl_env`` explains both; :class:`~dcops.training.scheduler.trl_env.ClusterSchedulingEnv`
is the same game through TRL's ``environment_factory`` and tool calls instead).

Run against a server (``make run`` in another shell; ``--model`` takes ``gemma``, ``tiny``, a model folder or a
Hugging Face id in the local cache)::

    python examples/trl_rollout_func.py --url http://127.0.0.1:8000 --model tiny --steps 2 --out runs/rollout_func

It writes TRL's checkpoints (none by default), ``rollouts.jsonl`` (each rollout's episode id, seed, window rewards
and reward) and ``summary.json`` (the model's source and TRL's per-step logs) under ``--out``.
``tests/training/test_trl_rollout_func.py`` runs it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

SEED_LINE = "Episode seed: {seed}"
_SEED = re.compile(r"Episode seed: (\d+)")


def episode_prompts(seeds: Sequence[int]) -> Any:
    """The training dataset: one ``prompt`` naming each episode (the rollout function reads the seed back)."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": SEED_LINE.format(seed=int(s))} for s in seeds])


def make_rollout_func(base_url: str, options: Mapping[str, Any] | None = None, max_turn_tokens: int = 256,
                      few_shot: bool = False, log_path: str | Path | None = None
                      ) -> Callable[[list[str], Any], dict[str, list]]:
    """A ``rollout_func`` playing one served episode per prompt entry (module docstring).

    :param base_url: the dcops server.
    :param options: task options of every reset (e.g. ``{"n_windows": 4, "max_requests_per_team": 1}``).
    :param max_turn_tokens: most tokens the model writes for one window.
    :param few_shot: put the prompt's worked example in the first turn.
    :param log_path: if set, each rollout is appended there as one JSON line.
    """
    from dcops.training.scheduler.grpo import default_stop_strings, stop_token_ids

    stop_ids: list[int] | None = None

    def rollout_func(prompts: list[str], trainer: Any) -> dict[str, list]:
        import torch
        from trl.models.utils import unwrap_model_for_generation

        from dcops.agents.llm.parser import parse_decisions
        from dcops.agents.llm.prompt import prompt_head, window_question
        from dcops.client import DcopsClient
        from dcops.training.scheduler.reward import FormatTerms

        nonlocal stop_ids
        tokenizer = trainer.processing_class
        if stop_ids is None:  # the answer ends at a blank line or a new heading (dcops.training.scheduler.grpo)
            stop_ids = sorted({tokenizer.eos_token_id, *stop_token_ids(tokenizer, default_stop_strings())})
        terms = FormatTerms()
        n = len(prompts)
        clients = [DcopsClient(base_url) for _ in range(n)]
        seeds = [int(_SEED.search(str(p)).group(1)) for p in prompts]
        replies = [c.reset(task="cluster/operations", seed=s, **dict(options or {})) for c, s in zip(clients, seeds, strict=True)]
        views = [r.observation["view"] for r in replies]
        prompt_ids = [tokenizer(prompt_head(few_shot) + window_question(v), add_special_tokens=False)["input_ids"]
                      for v in views]
        completion_ids: list[list[int]] = [[] for _ in range(n)]
        logprobs: list[list[float]] = [[] for _ in range(n)]
        env_mask: list[list[int]] = [[] for _ in range(n)]
        records = [{"seed": s, "episode_id": r.metadata.get("episode_id"), "window_rewards": [],
                    "format_terms": [], "server_total": None} for s, r in zip(seeds, replies, strict=True)]
        active = [i for i in range(n) if not replies[i].done]
        device = trainer.accelerator.device
        while active:
            contexts = [prompt_ids[i] + completion_ids[i] for i in active]
            width = max(len(c) for c in contexts)
            pad = tokenizer.pad_token_id
            input_ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
            attention = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device)
            with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model, torch.no_grad():
                out = model.generate(input_ids=input_ids, attention_mask=attention, do_sample=True,
                                     temperature=trainer.temperature, top_p=trainer.top_p,
                                     max_new_tokens=max_turn_tokens, eos_token_id=stop_ids, pad_token_id=pad,
                                     output_scores=True, return_dict_in_generate=True)
            new = out.sequences[:, width:]
            step_logps = torch.stack(out.scores, dim=1).log_softmax(-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
            still = []
            for row, i in enumerate(active):
                ids = new[row].tolist()
                end = next((k + 1 for k, t in enumerate(ids) if t in stop_ids), len(ids))  # keep the stop token
                turn, turn_logps = ids[:end], step_logps[row, :end].tolist()
                completion_ids[i] += turn
                logprobs[i] += turn_logps
                env_mask[i] += [1] * len(turn)
                parsed = parse_decisions(tokenizer.decode(turn, skip_special_tokens=True), views[i])
                result = clients[i].step({"decisions": parsed.decisions})
                reward = float(result.reward or 0.0)
                records[i]["window_rewards"].append(reward)
                records[i]["format_terms"].append(terms.score(parsed.format_ok, parsed.n_invalid))
                records[i]["server_total"] = result.metadata.get("total_reward")
                if result.done:
                    continue
                views[i] = result.observation["view"]
                feedback = tokenizer(f"\n\nWindow reward {reward:+.3f}.\n\n" + window_question(views[i]),
                                     add_special_tokens=False)["input_ids"]
                completion_ids[i] += feedback
                logprobs[i] += [0.0] * len(feedback)
                env_mask[i] += [0] * len(feedback)
                still.append(i)
            active = still
        for client in clients:
            client.close()
        rewards = [sum(r["window_rewards"]) + sum(r["format_terms"]) for r in records]
        if log_path is not None:
            with Path(log_path).open("a") as f:
                for record, reward in zip(records, rewards, strict=True):
                    f.write(json.dumps({**record, "reward": reward}) + "\n")
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": logprobs,
                "env_mask": env_mask, "episode_reward": rewards,
                "model_turns": [len(r["window_rewards"]) for r in records]}

    return rollout_func


def episode_reward(prompts: list[Any], completions: list[Any], episode_reward: list[float], **kwargs: Any
                   ) -> list[float]:
    """The reward function: the per-rollout ``episode_reward`` field of the rollout function's output."""
    return [float(r) for r in episode_reward]


def main(argv: Sequence[str] | None = None, model: Any = None, tokenizer: Any = None) -> dict[str, Any]:
    """Train for ``--steps`` GRPO steps; returns the summary also written to ``summary.json``. ``model`` and
    ``tokenizer`` replace ``--model`` (a test passes its own)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the dcops server (make run)")
    parser.add_argument("--model", default="tiny", help="gemma, tiny, a model folder or a cached Hugging Face id")
    parser.add_argument("--out", type=Path, default=Path("runs/rollout_func"))
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1000, 1001])
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--n-windows", type=int, default=2, help="windows per episode (turns per rollout)")
    parser.add_argument("--max-requests-per-team", type=int, default=1)
    parser.add_argument("--max-turn-tokens", type=int, default=128)
    parser.add_argument("--lr", type=float, default=5e-3)
    args = parser.parse_args(argv)

    import os

    import torch
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    from dcops.agents.llm.model import load_model
    from dcops.training.scheduler.grpo import score_only_completion_tokens

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if model is None or tokenizer is None:
        model, tokenizer, source = load_model(args.model)
        model_source = {"name": source.name, "kind": source.kind, "location": source.location,
                        "revision": source.revision}
    else:
        model_source = {"name": args.model, "kind": "given", "location": "passed to main", "revision": None}
    tokenizer.padding_side = "left"
    args.out.mkdir(parents=True, exist_ok=True)
    rollouts = args.out / "rollouts.jsonl"
    options = {"n_windows": args.n_windows, "max_requests_per_team": args.max_requests_per_team}
    config = GRPOConfig(
        output_dir=str(args.out), seed=0, max_steps=args.steps, num_generations=args.num_generations,
        per_device_train_batch_size=args.num_generations, temperature=1.0, learning_rate=args.lr, beta=0.0,
        logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=True, lr_scheduler_type="constant",
        dataloader_num_workers=0, bf16=torch.cuda.is_available(),  # TRL's default bf16 needs a GPU
    )
    trainer = GRPOTrainer(
        model=model, args=config, train_dataset=episode_prompts(args.seeds), processing_class=tokenizer,
        reward_funcs=[episode_reward],
        rollout_func=make_rollout_func(args.url, options, args.max_turn_tokens, log_path=rollouts),
        peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
    )
    with score_only_completion_tokens():
        trainer.train()
    summary = {"model_source": model_source, "options": options, "steps": trainer.state.global_step,
               "logs": [row for row in trainer.state.log_history if "reward" in row]}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
    print(f"{summary['steps']} GRPO steps; rollouts in {rollouts}")
    return summary


if __name__ == "__main__":
    main()
