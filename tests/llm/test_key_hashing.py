"""The messages of a call are hashed in pieces (so hashlib keeps the GIL): the digest is the whole buffer's."""

from __future__ import annotations

import hashlib

from howtobench.llm.keys import GIL_KEPT_BELOW, hash_holding_the_gil


def test_hashing_in_pieces_gives_the_digest_of_the_whole() -> None:
    for size in (0, 1, GIL_KEPT_BELOW - 1, GIL_KEPT_BELOW, 3 * GIL_KEPT_BELOW + 5, 13_000):
        data = bytes((i * 7) % 251 for i in range(size))
        digest = hashlib.sha256(b"head")
        hash_holding_the_gil(digest, data)
        assert digest.hexdigest() == hashlib.sha256(b"head" + data).hexdigest()
