"""Rewards for RL trainers: `howtobench.rl.verl` (verl's custom reward function, single, async and batch) and
`howtobench.rl.trl` (an async reward function for TRL's GRPOTrainer). OpenRLHF needs no adapter: it calls
`howtobench serve` at `--reward.remote_url http://host:port/get_reward`.

Importing these modules imports no trainer: they take what the trainers pass (strings, dicts, lists) and give
back floats, dicts of floats or None. Each adapter talks to a running `howtobench serve` (the URL in its
arguments or `$HOWTOBENCH_REWARD_URL`) or judges in the trainer's own process over the same judge layer
(`scorers.py`). See docs/rl.md.
"""
