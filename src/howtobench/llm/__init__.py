"""The one layer every model call goes through (nothing above it knows about HTTP).

    types.py       ChatRequest / ChatResult / Usage / LLMClient: the contract callers use
    client.py      open_client(endpoint, workspace=..., cache_mode=...) -> OpenAIClient.chat()
    transport.py   the network seam: aiohttp, the one HTTP stack
    retry.py       which failures are retried and how long to wait
    limits.py      slots per base URL (least busy first), a circuit breaker per URL, the rpm limit
    structured.py  response_format, <think> stripping, JSON extraction, schema validation, re-ask wording
    cache.py       the SQLite call log / cache (<workspace>/calls.sqlite), append-only migrations
    accounting.py  price table, cost, usage per run and purpose, --dry-run estimates
    local.py       the embedded Gemma-3-270M llama.cpp server (the default without an endpoint)
"""
