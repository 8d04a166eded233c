"""Build or extend a HoWToBench-style benchmark from human-written texts (paper 4.2-4.6, App. D-G).

One module per step, each reading the previous step's JSONL file in a build directory (workfile.py):

    ingest.py    texts from folders / JSONL; de-duplication, length limits, language   -> 01_ingest.jsonl
    classify.py  one genre per text from an LLM, with a reason (editable)              -> 02_classify.jsonl
    quality.py   genre rubric score 1-5, keep >= threshold (paper: 4)                  -> 03_filter.jsonl
    make.py      Completion (completion.py) and Guide/Open (backconstruct.py) items    -> 04_items.jsonl
    review.py    review JSONL + HTML, then import into the release layout              -> 05_review.*, <out>/
    pipeline.py  runs a model-backed step with a client (or prices it for --dry-run)

Prompts (prompts/<lang>/*.j2) and per-genre rubrics, traits, examples and instruction templates (data/*.yaml)
are files, written in our own words. Model calls go through the client layer (cache, retries, accounting);
a failed call is recorded in the stage file, never replaced by a guessed value.
"""
