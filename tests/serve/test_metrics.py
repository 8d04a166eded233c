"""The running means of /metrics: over the last WINDOW judged samples exactly, per name."""

from __future__ import annotations

import pytest

from howtobench.judges.base import Judgment, LeafResult
from howtobench.serve.metrics import WINDOW, ServeMetrics


def judgment(score: float) -> Judgment:
    return Judgment(method="tow", item_id="i", model="policy", task="open", genre="g", score=score,
                    nodes={"content": score / 2}, leaves=[LeafResult(name="logic", score=score)])


def test_leaf_node_root_and_length_means_cover_the_last_window_only() -> None:
    metrics = ServeMetrics()
    scores = [float(k % 11) for k in range(WINDOW + 250)]
    for k, score in enumerate(scores):
        metrics.judged(judgment(score), "字" * (k % 7), 0.1, None)
    last = scores[-WINDOW:]
    text = metrics.text().decode()
    mean = sum(last) / WINDOW
    assert f'howtobench_score_mean{{name="root"}} {mean}' in text
    assert f'howtobench_score_mean{{name="logic"}} {mean}' in text
    content = float(text.split('howtobench_score_mean{name="content"} ')[1].split()[0])
    assert content == pytest.approx(mean / 2)
    chars = float(text.split("\nhowtobench_response_chars_mean ")[1].split()[0])
    assert chars == pytest.approx(sum(k % 7 for k in range(250, WINDOW + 250)) / WINDOW)
    metrics.judged(judgment(0).model_copy(update={"status": "failed", "score": None}), "", 0.1, None)
    assert 'howtobench_failures_total{kind="judgment_failed"} 1.0' in metrics.text().decode()
