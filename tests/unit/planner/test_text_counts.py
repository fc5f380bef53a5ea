"""planner.text.count and blocks_note: the words of the Slurm and materialize comments (issue 35 item 11:
'the first 0 one row longer', '1 ranks')."""
from planner.export.sharding import block
from planner.text import blocks_note, count


def test_count_agrees_with_its_number():
    assert count(1, "rank") == "1 rank"
    assert count(0, "rank") == "0 ranks"
    assert count(2_000, "row") == "2,000 rows"
    assert count(3, "shard", "shards") == "3 shards"


def test_blocks_note_matches_the_split():
    # 1,000 rows over 4 ranks: 250 each, no remainder -> no "first 0" clause
    assert [b - a for a, b in (block(1000, 4, r) for r in range(4))] == [250] * 4
    assert blocks_note(1000, 4) == "equal blocks of 250 rows"
    # 10 rows over 4: divmod(10, 4) = (2, 2): 3, 3, 2, 2
    assert [b - a for a, b in (block(10, 4, r) for r in range(4))] == [3, 3, 2, 2]
    assert blocks_note(10, 4) == "blocks of 2 or 3 rows, the first 2 one row longer"
    # 7 over 3: (2, 1): 3, 2, 2
    assert blocks_note(7, 3) == "blocks of 2 or 3 rows, the first one one row longer"
    assert blocks_note(1, 1) == "one block of 1 row"
    # 2 rows over 2: 1 each, singular
    assert blocks_note(2, 2) == "equal blocks of 1 row"
