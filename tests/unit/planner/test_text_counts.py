"""planner.text.count and dealt_note: the words of the Slurm and materialize comments (issue 35 item 11:
'the first 0 one row longer', '1 ranks')."""
from planner.export.sharding import shard_rows
from planner.text import count, dealt_note


def test_count_agrees_with_its_number():
    assert count(1, "rank") == "1 rank"
    assert count(0, "rank") == "0 ranks"
    assert count(2_000, "row") == "2,000 rows"
    assert count(3, "shard", "shards") == "3 shards"


def test_dealt_note_matches_the_split():
    tail = "about 1/4 of every component and so of the bytes"
    # 1,000 rows over 4 shards: 250 each, no remainder -> no "one row more" clause
    assert [shard_rows(1000, 4, r) for r in range(4)] == [250] * 4
    assert dealt_note(1000, 4) == f"dealt in turn (row p of the materialized order to shard p mod 4), 250 rows each, {tail}"
    # 10 rows over 4: positions 0,4,8 | 1,5,9 | 2,6 | 3,7 -> 3, 3, 2, 2: divmod(10, 4) = (2, 2)
    assert [shard_rows(10, 4, r) for r in range(4)] == [3, 3, 2, 2]
    assert dealt_note(10, 4).endswith(f"2 or 3 rows each (shards 0 to 1 one row more), {tail}")
    # 7 over 3: (2, 1): 3, 2, 2: shard 0 alone has the extra row
    assert [shard_rows(7, 3, r) for r in range(3)] == [3, 2, 2]
    assert "2 or 3 rows each (shard 0 one row more)" in dealt_note(7, 3)
    assert dealt_note(1, 1) == "one shard of 1 row"
    # 2 rows over 2: 1 each, singular
    assert "1 row each" in dealt_note(2, 2)
