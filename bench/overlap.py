"""Overlap-metric speed on the whole release: our ROUGE-L / BLEU-1 vs the release's per-writing rouge-chinese loop.

    python bench/overlap.py [--baseline-sample 40] [--workers 1] [--max-cells 6000000] [--all-methods]

1. Scores all release writings (13,020) with `score_overlap` (jieba once per distinct text, bit-parallel LCS,
   references shared by the 10 models) and times it: ROUGE-L alone (and all three metrics with --all-methods).
2. Times the straightforward loop the authors' release uses (per writing: jieba both texts, space-join,
   `rouge_chinese.Rouge().get_scores`) on a seeded random sample. Its O(nm) dict table takes seconds and
   gigabytes on the long Guide/Open pairs, so running it on all 13,020 writings would take hours: the sample's
   per-writing time is extrapolated to the full release (pairs above `--max-cells` token-pairs are left out of
   the sample to bound memory; they are the slowest for rouge-chinese, so leaving them out understates the
   speed-up).
3. Prints both times (CPU seconds: the machine may be shared; wall time beside), the speed-up, and the
   largest absolute difference of ROUGE-L values on the sample.
With `--workers` > 1 the CPU time of worker processes is not counted: compare wall times then.
"""

from __future__ import annotations

import argparse
import random
import time

import jieba
from rouge_chinese import Rouge

from howtobench.config import resolve_data_dir
from howtobench.data.loader import load_items, load_release_writings
from howtobench.data.models import Item, Writing
from howtobench.judges.overlap import score_overlap


def release_loop(pairs: list[tuple[Item, Writing]]) -> list[float]:
    """The release's approach: per writing, jieba both texts and call rouge-chinese."""
    rouge = Rouge(metrics=["rouge-l"])
    out = []
    for item, writing in pairs:
        hyp, ref = " ".join(jieba.lcut(writing.output)), " ".join(jieba.lcut(item.reference))
        out.append(float(rouge.get_scores(hyp, ref)[0]["rouge-l"]["f"]))
    return out


def timed(label: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run fn; print wall and CPU seconds (CPU is the fair figure on a shared machine). Returns (result, cpu)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label}: {cpu:.1f} s CPU ({wall:.1f} s wall)", flush=True)
    return result, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-sample", type=int, default=40, help="writings timed with rouge-chinese")
    parser.add_argument("--all-methods", action="store_true", help="also time BLEU-1 + ROUGE-L + sacreBLEU")
    parser.add_argument("--workers", type=int, default=1, help="processes for jieba in our path")
    parser.add_argument("--max-cells", type=int, default=6_000_000, help="skip larger pairs in the baseline sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    root = resolve_data_dir(None)
    items = load_items(root)
    by_id = {it.id: it for it in items}
    pairs = [(by_id[w.item_id], w) for w in load_release_writings(root, items=items) if not w.is_empty]
    print(f"release: {len(items)} items, {len(pairs)} non-empty writings, data {root}", flush=True)
    jieba.initialize()

    ours, t_rouge = timed("ours, ROUGE-L, all writings", score_overlap, pairs, ("rouge",), workers=args.workers)
    if args.all_methods:
        timed("ours, BLEU-1 + ROUGE-L + sacreBLEU, all writings", score_overlap, pairs, workers=args.workers)

    rng = random.Random(args.seed)
    pool = rng.sample(pairs, min(len(pairs), 3 * args.baseline_sample))
    fits = [(it, w) for it, w in pool if len(jieba.lcut(w.output)) * len(jieba.lcut(it.reference)) <= args.max_cells]
    sample = fits[: args.baseline_sample]
    print(f"baseline sample: {len(sample)} writings (seed {args.seed}, pairs <= {args.max_cells:,} token-pairs)",
          flush=True)
    base, t_base = timed("release loop (jieba + rouge-chinese), sample", release_loop, sample)
    fast, t_fast_sample = timed("ours on the same sample", score_overlap, sample, ("rouge",))

    index = {(it.id, w.model): j.score for (it, w), j in zip(pairs, ours["rouge"], strict=True)}
    diff = max(abs(b - (index[(it.id, w.model)] or 0.0)) for (it, w), b in zip(sample, base, strict=True))
    diff_sample = max(abs(b - (j.score or 0.0)) for b, j in zip(base, fast["rouge"], strict=True))
    extrapolated = t_base / len(sample) * len(pairs)
    print(f"speed-up on the sample (same writings): {t_base / t_fast_sample:.0f}x")
    print(f"release loop extrapolated to {len(pairs)} writings: {extrapolated / 3600:.2f} h; ours {t_rouge:.1f} s; "
          f"speed-up {extrapolated / t_rouge:.0f}x")
    print(f"largest |ROUGE-L ours - rouge-chinese| on the sample: {max(diff, diff_sample):.3g}")


if __name__ == "__main__":
    main()
