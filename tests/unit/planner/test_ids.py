"""planner/ids.py: the patterns every name a user or a file gives must match, at their edges."""
from __future__ import annotations

import pytest

from planner.ids import (
    check_no_control,
    has_control,
    has_unshown,
    is_hub_name,
    is_hub_part,
    is_id,
    is_local_path,
)


def test_ids_lower_case_1_to_64_characters():
    assert is_id("a") and is_id("llama-3.1_8b") and is_id("a" * 64)
    assert not is_id("a" * 65)                    # 1 + 63 at most
    assert not is_id("")
    assert not is_id("Llama")                     # lower case only
    assert not is_id("-a") and not is_id(".a")    # the first character a letter or digit
    assert not is_id("a\n")                       # fullmatch: no trailing newline
    assert not is_id(7)                           # not a string


def test_hub_names_owner_slash_name():
    assert is_hub_name("meta-llama/Llama-3.1-8B")
    assert is_hub_name("a/" + "b" * 96)           # 96 characters a side
    assert not is_hub_name("a/" + "b" * 97)
    assert not is_hub_name("Llama-3.1-8B")        # no owner
    assert not is_hub_name("a/b/c") and not is_hub_name("a/-b")


def test_hub_parts_allow_plus_up_to_128():
    assert is_hub_part("train_sft+gen") and is_hub_part("x" * 128)
    assert not is_hub_part("x" * 129) and not is_hub_part("+x") and not is_hub_part("a b")


def test_local_paths_refuse_dot_dot_and_a_leading_dash():
    assert is_local_path("/models/llama") and is_local_path("./-name") and is_local_path("a..b/c")
    assert not is_local_path("--trust-remote-code")      # read as a flag
    assert not is_local_path("../secret") and not is_local_path("/a/../b") and not is_local_path("/a/..")
    assert not is_local_path("a b") and not is_local_path("x" * 256)
    assert is_local_path("x" * 255)


def test_control_and_unshown_characters():
    assert has_control("a\nb") and has_control("\x1b[31m") and has_control("\x85")   # C0, C1 (NEL)
    assert not has_control("plain text \u00e9")
    assert has_unshown("a\u202eb")                # RIGHT-TO-LEFT OVERRIDE: not a control, but unshown
    assert not has_control("a\u202eb")
    assert has_unshown("\t") and not has_unshown("caf\u00e9")
    assert check_no_control("ok") == "ok"
    with pytest.raises(ValueError, match="control characters"):
        check_no_control("a\rb")
