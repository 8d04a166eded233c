"""What a rater may see: one instruction with its responses and their own ratings, and their progress.

Built once for both the HTML page and the JSON API, always for one rater: another rater's ratings and the
models' names never enter it (a response is known by its letter only).
"""

from __future__ import annotations

from typing import Any

from howtobench.rate.assign import Progress, progress
from howtobench.rate.protocol import ERROR_TYPES, SCORE_BANDS, Rating
from howtobench.rate.study import Study

TASK_GROUNDING = {
    "completion": "Text to complete",
    "guide": "Outline and material",
    "open": "Material",
}


def progress_view(p: Progress) -> dict[str, Any]:
    return {
        "rater": p.rater,
        "instructions": len(p.groups),
        "finished": p.groups_done,
        "skipped": p.skipped,
        "responses_rated": p.responses_rated,
        "responses_total": p.responses_total,
        "writings_covered": p.writings_covered,
        "writings_total": p.writings_total,
    }


def rating_view(rating: Rating | None, complete: bool) -> dict[str, Any]:
    if rating is None:
        return {"score": None, "dims": {}, "error_types": [], "comment": "", "complete": False}
    return {"score": rating.score, "dims": dict(rating.dims), "error_types": list(rating.error_types),
            "comment": rating.comment, "complete": complete}


def item_view(study: Study, rater: str, item_id: str) -> dict[str, Any] | None:
    """The instruction page's content for `rater`, or None when the instruction is not in their queue."""
    p = progress(study, rater)
    item = study.store.item(item_id)
    if item is None or not p.holds(item_id):
        return None
    mine = {r.model: r for r in study.store.ratings(rater=rater, item_id=item_id)}
    responses = []
    for w in study.store.writings(item_id):
        saved = mine.get(w.model)
        rating = rating_view(saved.rating if saved else None, saved.complete if saved else False)
        responses.append({"letter": w.letter, "text": w.output, "rating": rating})
    prev_id, next_id = p.neighbours(item_id)
    index = [g.item_id for g in p.groups].index(item_id)
    group = p.groups[index]
    return {
        "item": {"id": item.id, "task": item.task, "genre": item.genre, "language": item.language,
                 "instruction": item.instruction, "information": item.information, "reference": item.reference,
                 "grounding_label": TASK_GROUNDING.get(item.task, "Material")},
        "responses": responses,
        "skipped": group.skipped,
        "position": index + 1,
        "prev": prev_id,
        "next": next_id,
        "progress": progress_view(p),
    }


def protocol_view(study: Study, task: str) -> dict[str, Any]:
    """Scales, anchors, error types and criteria the page shows next to the responses."""
    protocol = study.protocol
    return {
        "mode": protocol.mode,
        "scale": list(protocol.scale),
        "anchor": protocol.anchor,
        "bands": [{"score": s, "zh": t.zh, "en": t.en} for s, t in SCORE_BANDS],
        "error_types": [{"id": e.id, "zh": e.label.zh, "en": e.label.en, "forces_one": e.forces_one}
                        for e in ERROR_TYPES],
        "leaves": [
            {"id": leaf.id, "label_zh": leaf.label.zh, "label_en": leaf.label.en, "criteria_zh": leaf.criteria.zh,
             "criteria_en": leaf.criteria.en, "scale": list(leaf.scale)}
            for leaf in protocol.leaves(task)
        ],
    }
