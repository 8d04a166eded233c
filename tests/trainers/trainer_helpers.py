"""What the trainer tests share: a tokenizer built offline, a tiny random causal LM, and a fake ToW judge whose
faults the test switches (healthy, garbage, down for a while and back on its port) while counting its calls."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_server import FakeServer, Reply, hold_port
from judge_replies import server_handler

CHARS = "写一篇文章首诗关于春天的故事标题正文结尾段落好很美丽山水花鸟风月人心" + "abcdefghij0123456789 \n#。，"
GUIDE = "guide/infer_354"


def tiny_tokenizer() -> Any:
    """A character-level fast tokenizer with chat-style special tokens, built without any download (every character
    of the tests' texts is in its vocabulary, so decode(encode(text)) == text)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<|im_start|>", "<|im_end|>", "<unk>"]
    vocab = {tok: i for i, tok in enumerate(specials + sorted(set(CHARS)))}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    core.decoder = decoders.Fuse()  # decoded text is the characters joined, as a BPE tokenizer's would be
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<|im_end|>",
                                  bos_token="<|im_start|>", unk_token="<unk>")
    tok.padding_side = "left"
    return tok


def tiny_model(vocab_size: int) -> Any:
    """A randomly initialised one-layer Llama (a few thousand parameters: runs on the CPU in milliseconds)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2)
    return LlamaForCausalLM(config)


def garbage(request: dict[str, Any]) -> Reply:
    return Reply.text("I would rather not say") if request.get("response_format") else Reply.text("pong")


class Judge:
    """A fake ToW judge on a held port: `garbage()`, `down(seconds)` (killed, then started again on its port)."""

    def __init__(self) -> None:
        self._holder = hold_port()
        self.port = self._holder.getsockname()[1]
        self.server = FakeServer(server_handler(), port=self.port, reuse_port=True).start()
        self.answered: list[dict[str, Any]] = []  # every judge call answered, across restarts
        self.outage: tuple[float, float] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def calls(self) -> list[dict[str, Any]]:
        return [*self.answered, *(r for r in self.server.requests if r.get("response_format"))]

    def garbage(self) -> None:
        self.server.handler = garbage

    def down_for(self, seconds: float, after_calls: int = 1) -> threading.Thread:
        """Kill the judge once it answered `after_calls` more calls, keep it dead `seconds`, start it again."""
        start = len(self.calls())

        def outage() -> None:
            while len(self.calls()) < start + after_calls:
                time.sleep(0.005)
            self.server.stop()  # stopped first: a call arriving between a harvest and the stop went unrecorded
            self.answered += [r for r in self.server.requests if r.get("response_format")]
            died = time.monotonic()
            time.sleep(seconds)
            self.server = FakeServer(server_handler(), port=self.port, reuse_port=True).start()
            self.outage = (died, time.monotonic())

        thread = threading.Thread(target=outage, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.server.stop()
        self._holder.close()


@contextmanager
def judge() -> Iterator[Judge]:
    fake = Judge()
    try:
        yield fake
    finally:
        fake.close()


def weights_calls(calls: list[dict[str, Any]]) -> int:
    return sum(1 for r in calls if r["response_format"]["json_schema"]["name"] == "weights")


def calls_per_instruction(calls: list[dict[str, Any]]) -> Counter[str]:
    """Judge calls by the instruction they judge (the first user message's first line names it)."""
    return Counter(r["messages"][-1]["content"][:200] for r in calls)
