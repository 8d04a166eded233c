"""Meta-evaluation and the paper's analyses, computed from stored judgment files and human ratings only.

    human         human ratings (JSONL / CSV) and rater averaging
    agreement     inter-annotator κ (Cohen unweighted / linear / quadratic, Fleiss), Pearson, Krippendorff's α
    correlate     judge vs human correlations, system and sample level, per task, BCa / percentile CIs (Table 3)
    correlate_table  the Table 3 / 5 layout, naming interval method, item policy and items used
    ablation      ToW root without / with only each node (Table 5)
    inconsistency negotiation inconsistency delta / sigma (section 5.3); documents the weight-sample format
    length        input / output length vs scores, pooled fits, Figure 5 (section 6.1, Table 6)
    weights       edge-weight distributions per genre and leaf (Figures 3 and 6)
    judges        judge vs judge (and human) Pearson matrix and heatmap (Appendix B.1, Figure 4)
    (statistics on plain arrays — correlations, intervals, α, κ, ICC — live in `howtobench.stats`)
    plots         matplotlib set-up: Agg, bundled CJK font, PNG + SVG

Commands: `howtobench meta correlate | agreement | ablation | inconsistency` and
`howtobench analyze length | weights | judges`; every table prints with `--format rich|markdown|csv|json`.
"""
