"""Calibration: a new judge's scores in a reference judge's units (or the paper's), with stated uncertainty.

    anchors.py     which writings both judges score (stratified by task × genre × model, sized from a width)
    anchor_job.py  the anchors' texts and the new judge's judgment file beside the calibration file
    isotonic.py    the monotone map (scipy's isotonic_regression) and its bootstrap over anchors
    fit.py         one map per node and task from paired judgments -> a `Calibration`
    drift.py       how far the judges drift apart (Spearman, Kendall, shifts, rank changes beyond the interval)
    paper.py       the paper as the reference: a system-level line per task, refused unless Kendall τ is significant
    apply.py       scores through a calibration, intervals over items and anchors at once
    labels.py      the calibrated metrics' names and titles (their leaderboard cells: report/calibrated.py)
    record.py      the calibration file, its loading and the check that judgments fit it
    route.py       what --compare / --baseline say for a model that is only a column of the paper

docs/calibration.md has the method, its assumptions and the measured figures (bench/calibration.py).
"""
