"""HoWToBench inside inspect_ai (the optional `howtobench[inspect]` extra): thin adapters, no second judge.

    client.py    InspectJudgeClient: our LLMClient protocol over an inspect Model (re-asks, usage, prices)
    dataset.py   items -> Samples (the prompts of `howtobench generate`, the item in the metadata)
    scorers.py   tow / rubric / single / autoplan / howtobench_judge: our judges -> Score (leaves in metadata)
    metrics.py   leaderboard(): the means of `howtobench leaderboard` (all, task, genre, node)
    task.py      the `howtobench/howtobench` task
    _registry.py what inspect's entry point imports

Importing this package needs inspect_ai; nothing else in howtobench imports it.
"""
