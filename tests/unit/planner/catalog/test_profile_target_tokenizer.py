"""The profile's default token counter is the target's own tokenizer where one ships (issue 35 item 9)."""
from planner.catalog.profile import BUILTIN_TOKENIZERS, Counter, target_tokenizer


def test_the_target_with_a_shipped_tokenizer_gets_it():
    assert target_tokenizer("qwen3.6-27b") == "qwen3.6"
    assert Counter(target_tokenizer("qwen3.6-27b")).label.startswith("tokenizer qwen3.6")


def test_targets_without_one_keep_the_approximation():
    # Qwen3-8B's vocabulary (151,936) is not the 3.5/3.6 one (248,320): no built-in for it
    for model in ("qwen3-8b", "llama-3.1-8b", "custom", None, ""):
        assert target_tokenizer(model) is None
    assert set(BUILTIN_TOKENIZERS) >= {"qwen3.6"}
