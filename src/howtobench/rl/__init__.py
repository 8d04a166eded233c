"""Rewards for RL trainers: `howtobench.rl.verl` (verl's custom reward function), `howtobench.rl.trl` (an async
reward function for TRL's GRPOTrainer) and `howtobench.rl.slime` (slime's custom reward, per sample or per group).
OpenRLHF needs no adapter: it calls `howtobench serve` at `--reward.remote_url http://host:port/get_reward`; slime
may too (`--rm-url http://host:port/slime`). Their arguments are `arguments.RewardArguments`.

Importing these modules imports no trainer: they take what the trainers pass (strings, dicts, lists) and give
back floats, dicts of floats or None. Each adapter talks to a running `howtobench serve` (the URL in its
arguments or `$HOWTOBENCH_REWARD_URL`) or judges in the trainer's own process over the same judge layer
(`scorers.py`). See docs/rl.md.
"""
