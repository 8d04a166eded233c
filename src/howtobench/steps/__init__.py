"""The step layer: what every model-calling job shares (see ../shared/DESIGN.md, "One step layer").

    settings.py   `Selection` (which items and writings) and `Execution` (how the calls are answered)
    client.py     `step_client`: the one place that chooses live calls, a provider batch API or exported batch
                  files, runs the preflight, and says how many writings go in flight
    judge.py      the judge job (`howtobench judge`), on the step client
    generate.py   the generate job (`howtobench generate`), on the step client

A job takes its output's lock (`locked_output`), reads its selection, opens `step_client` and hands its client
and in-flight count to the runner of its kind (`judges.runner.run_judge`, `generate.generate_writings`,
`robustness.perturb_file`, the build steps of `construct.pipeline`), which reads what the output already holds
and runs the rest through `howtobench.runloop.run_loop` (the resumable runner loop: items in flight, each result
recorded durably as it finishes, the progress bar, the failed-share stop; it lives below the judges and generation,
which run on it, so no import runs back up).
"""
