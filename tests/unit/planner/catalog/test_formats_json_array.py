"""A JSON array dataset is streamed element by element, each element read as a JSONL line is: the
same counts as the same records in JSONL, a bounded memory whatever the file's size, and a file
that is not one array refused in one line naming the byte offset."""
import hashlib
import json
import random
import re
import subprocess
import sys

import pytest

from planner.catalog import formats
from planner.catalog.formats import RecordError, _array_elements
from planner.catalog.profile import ProfileError, profile_file
from planner.cli.main import main
from tests.helpers import ROOT, run_cli

# Three conversations and two bad records. The approximate counter: ceil(UTF-8 bytes / 4) tokens a
# text, + 4 a message (the flat template estimate).
#   A: "abcdefgh" 8 B -> 2 + 4 = 6; "abcdefghijkl" 12 B -> 3 + 4 = 7                    = 13
#   B: "abcd" 1 + 4 = 5; "abcdefgh" 2 + 4 = 6; "ab" 1 + 4 = 5; "abcdefghijklmnop" 4 + 4 = 8 = 24
#   C: "a" 1 + 4 = 5; 'x]}"\' (5 B: brackets, a quote and a backslash in a string) 2 + 4 = 6 = 11,
#      with an "id" key no other record has (DuckDB's schema from the first records refused it)
#   NaN text and a bare number are bad records, as in JSONL.
# Mean 48 / 3 = 16 tokens; assistant tokens A 7, B 6 + 8 = 14, C 6: mean 27 / 3 = 9.
A = {"conversations": [{"from": "human", "value": "abcdefgh"}, {"from": "gpt", "value": "abcdefghijkl"}]}
B = {"conversations": [{"from": "human", "value": "abcd"}, {"from": "gpt", "value": "abcdefgh"},
                       {"from": "human", "value": "ab"}, {"from": "gpt", "value": "abcdefghijklmnop"}]}
C = {"id": 7, "conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": 'x]}"\\'}]}
NAN = '{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": NaN}]}'
RECORDS = [json.dumps(A), NAN, json.dumps(B), "42", json.dumps(C, indent=2)]


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    return tmp_path


def _same_numbers(a, b) -> None:
    keep = ("conversation", "turn", "mean_tokens", "median_tokens", "turns", "assistant_share", "bad_lines",
            "rows_available")
    assert {k: a.component.get(k) for k in keep} == {k: b.component.get(k) for k in keep}
    assert (a.conversations, a.bad_lines, a.sampled) == (b.conversations, b.bad_lines, b.sampled)


def test_a_small_array_profiles_to_the_hand_counted_numbers_and_as_its_jsonl(home):
    arr, lines = home / "small.json", home / "small.jsonl"
    arr.write_text("[\n  " + ",\n  ".join(RECORDS) + "\n]\n")
    lines.write_text("".join(r.replace("\n", "") + "\n" for r in RECORDS))
    r = profile_file(arr, "arr")
    assert (r.conversations, r.bad_lines) == (3, 2)
    assert r.component["sha256"] == hashlib.sha256(arr.read_bytes()).hexdigest()   # every byte, once
    assert r.component["mean_tokens"] == pytest.approx(16)
    assert r.component["mean_tokens"] * r.component["assistant_share"] == pytest.approx(9)
    assert r.component["turns"] == pytest.approx((1 + 2 + 1) / 3)     # assistant turns a conversation
    # bad records are numbered by their place in the array: elements 2 (NaN text) and 4 (a number)
    assert [n for n, _ in r.bad_examples] == [2, 4]
    assert "float" in r.bad_examples[0][1] and "must be a JSON object" in r.bad_examples[1][1]
    _same_numbers(r, profile_file(lines, "lines"))
    with pytest.raises(ProfileError, match=r"^small.json: element 2: a content is float \(nan\)"):
        profile_file(arr, "strict", strict=True)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64, 2**20])
def test_elements_are_found_whatever_the_chunk_boundaries(size):
    text = ("\ufeff[ " + " ,\n".join(RECORDS + ['"a string \\" ] element"', "[1, [2, {}]]", "null"]) + "\t]\n"
            ).encode()
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    got = list(_array_elements(iter(chunks), "t.json"))
    assert [t.decode() for _, t in got] == [r for r in RECORDS] + ['"a string \\" ] element"', "[1, [2, {}]]", "null"]
    # offsets count the file's bytes (the 3-byte BOM and "[ " come before the first element)
    assert got[0][0] == 3 + 2 and all(text[at:at + 1] in (b"{", b"4", b'"', b"[", b"n") for at, _ in got)
    assert list(_array_elements(iter([b" [ ] "]), "e.json")) == []


def test_a_large_array_profiles_as_the_same_records_in_jsonl(home):
    # a few MB of varied ShareGPT records, some with keys others lack, some bad, pretty-printed
    rng = random.Random(5)
    records = []
    for i in range(6000):
        turns = [{"from": ("human", "gpt")[j % 2], "value": " ".join("tok" * rng.randint(1, 3)
                                                                     for _ in range(rng.randint(1, 120)))}
                 for j in range(2 * rng.randint(1, 3))]
        rec = {"conversations": turns, **({"id": i} if i % 3 else {}), **({"x": [1, {"y": "]"}]} if i > 5000 else {})}
        records.append(json.dumps(rec, indent=1 if i % 2 else None) if i % 997 else '{"conversations": 5}')
    arr, lines = home / "big.json", home / "big.jsonl"
    arr.write_text("[" + ",".join(records) + "]")
    lines.write_text("".join(json.dumps(json.loads(r)) + "\n" for r in records))
    assert arr.stat().st_size > 2_000_000
    a, b = profile_file(arr, "arr"), profile_file(lines, "lines")
    assert a.conversations == 6000 - 7 and a.bad_lines == 7    # i = 0, 997, ..., 5982: 7 bad
    _same_numbers(a, b)
    sampled = profile_file(arr, "arr_s", sample=500, seed=3)
    _same_numbers(sampled, profile_file(lines, "lines_s", sample=500, seed=3))
    # 500 elements sampled, of them `bad_lines` bad: the 6,000 scaled by the conversations' share
    k = sampled.sampled["rows_sampled"]
    assert k + sampled.bad_lines == 500 and sampled.sampled["rows_total"] == round(6000 * k / 500)
    assert sampled.component["sha256"] == hashlib.sha256(arr.read_bytes()).hexdigest()


@pytest.mark.parametrize("text, why", [
    ('[{"conversations": []}, {"conv', "the file ends inside an element (truncated?) at byte {size}"),
    ('[{"conversations": []}  ', "the file ends before the closing ']' (truncated?) at byte {size}"),
    ('[{"a": 1} xyz, {"b": 2}]', "b'x' after an element, not ',' or ']' at byte 10"),
    ('[{"a": 1}{"b": 2}]', "b'{' after an element, not ',' or ']' at byte 9"),
    ('[{"a": 1},, {"b": 2}]', "b',' where an element should be at byte 10"),
    ('[{"a": 1}] [{"b": 2}]', "b'[' after the array's closing ']' at byte 11"),
    ('[]', None),
])
def test_a_malformed_array_is_refused_in_one_line_naming_the_offset(home, text, why, capsys):
    # the CLI's main() in this process (a regular file cannot hang the read): a Python start a case less;
    # test_the_cli_numbers_a_bad_element_of_an_array_as_an_element keeps the path through `python -m planner`
    f = home / "bad.json"
    f.write_text(text)
    code = main(["profile", str(f), "--name", "bad"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if "100.0%" not in ln]   # the progress bar's line
    assert len(lines) == 1
    if why is None:    # an empty array holds no conversation
        assert "bad.json: no valid conversations" in lines[0]
    else:
        assert lines[0].endswith("bad.json: not a JSON array of records: " + why.replace("{size}", str(len(text))))


def test_a_top_level_object_says_how_a_json_file_is_read(home):
    # a .json file not starting with '[' is JSON Lines (a one-line object is one record): an object
    # written over several lines has no valid line, and the one-line message says why
    f = home / "obj.json"
    f.write_text(json.dumps(A, indent=2))
    r = run_cli("profile", str(f), "--name", "obj")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == (
        "planner: error: obj.json: no valid conversations (first: line 1: invalid JSON: Expecting property name "
        "enclosed in double quotes); a .json file that does not start with '[' is read as JSON Lines, "
        "one record a line")
    f.write_text(json.dumps(A))
    assert profile_file(f, "obj").conversations == 1


def test_a_top_level_object_is_not_an_array():
    with pytest.raises(RecordError, match=r"^o.json: not a JSON array of records: it starts with b'\{', not '\[' "
                                          r"at byte 0$"):
        list(_array_elements(iter([b'{"conversations": []}']), "o.json"))


def test_an_element_over_the_line_bound_is_one_bad_line_and_is_never_held(home, monkeypatch):
    monkeypatch.setattr(formats, "MAX_LINE_BYTES", 200)
    monkeypatch.setattr(formats, "ARRAY_CHUNK_BYTES", 64)
    huge = json.dumps({"conversations": [{"from": "gpt", "value": "x" * 1000}]})
    f = home / "h.json"
    f.write_text("[" + json.dumps(A) + "," + huge + "," + json.dumps(B) + "]")
    r = profile_file(f, "h")
    assert (r.conversations, r.bad_lines) == (2, 1)
    assert r.bad_examples[0][0] == 2 and "element longer than" in r.bad_examples[0][1]


# The process's growth of peak RSS profiling a 120 MB array (VmHWM: its own peak, reset at exec),
# over its RSS once the profiler is imported. DuckDB's read_json grew it by ~430 MB for 200 MB.
MEMORY = """
import json, sys
def kib(key):
    return int([l.split()[1] for l in open('/proc/self/status') if l.startswith(key)][0])
from planner.catalog.profile import profile_file
before = kib('VmRSS:')
r = profile_file(sys.argv[1], 'mem')
print(json.dumps({"n": r.conversations, "bad": r.bad_lines, "growth_mb": (kib('VmHWM:') - before) / 1024}))
"""


def test_profiling_a_large_array_holds_a_bounded_part_of_it(home):
    f = home / "mem.json"
    rec = json.dumps({"conversations": [{"from": "human", "value": "q " * 700}, {"from": "gpt", "value": "a " * 1300}]})
    block = ",".join([rec] * 1000)
    with open(f, "w") as fh:
        fh.write("[")
        for _i in range(30):   # 30,000 records of ~4 KB: ~120 MB, then one element over 16 MiB
            fh.write(block + ",")
        # and a record with a key none of the first 20,480 has (DuckDB's inferred schema refused the file)
        fh.write(rec.replace('{"conversations"', '{"model": "gpt-4", "conversations"', 1) + ",")
        fh.write(json.dumps({"conversations": [{"from": "gpt", "value": "z" * (17 * 2**20)}]}) + "]")
    size_mb = f.stat().st_size / 2**20
    out = subprocess.run([sys.executable, "-c", MEMORY, str(f)], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, check=True).stdout
    f.unlink()
    got = json.loads(out)
    assert (got["n"], got["bad"]) == (30001, 1)
    assert size_mb > 130 and got["growth_mb"] < 64, got


def _bracket_heavy(rng, size: int) -> list[str]:
    """Elements, about `size` bytes in all, that are mostly brackets and strings: deep [[[...]]]
    (shallow enough for json.loads), runs of empty strings, bracket pairs inside and around strings,
    escapes, and scalars: every bracket run split somewhere by the small pieces."""
    out, n = [], 0
    while n < size:
        k = rng.randint(1, 400)
        kind = rng.randrange(5)
        if kind == 0:
            e = "[" * k + "]" * k
        elif kind == 1:
            e = "[" + ",".join(['""'] * k) + "]"
        elif kind == 2:
            e = "[" * k + '"]]}\\\\' + '\\"[{"' + "]" * k
        elif kind == 3:
            e = "[" + ",".join(rng.choice(['[]', '{}', '[[],{}]', '{"a":[]}', '"]["', '1', 'null', '[[]]',
                                                    '"a\\\\"', '"\\"]"',
                                                    '{"\\\\\\"": [[{}]]}']) for _ in range(k)) + "]"
        else:
            e = rng.choice(['""', '"[[["', '0', 'true', '{"k":{"k":{}}}'])
        out.append(e)
        n += len(e) + 1
    return out


@pytest.mark.parametrize("size, total", [(1, 20_000), (2, 20_000), (3, 20_000), (7, 60_000), (4096, 2_000_000),
                                         (2**20, 2_000_000)])
def test_bracket_and_string_heavy_elements_are_split_as_json_reads_them(size, total):
    elements = _bracket_heavy(random.Random(size), total)
    text = ("[" + ",".join(elements) + "]").encode()
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    got = list(_array_elements(iter(chunks), "t.json"))
    # each element's own bytes, at its own offset; together, what json.loads reads of the whole
    assert [t.decode() for _, t in got] == elements
    assert all(text[at:at + len(t)] == t for at, t in got)
    assert [json.loads(t) for _, t in got] == json.loads(text)


def test_elements_past_json_loads_nesting_are_still_found_whole():
    # 100,000-deep elements (json.loads refuses them: a bad element each, as a bad line is)
    deep = "[" * 100_000 + "]" * 100_000
    text = ("[" + deep + ', "x", ' + deep + "]").encode()
    for size in (3, 4096, 2**20):
        chunks = [text[i:i + size] for i in range(0, len(text), size)]
        assert [t.decode() for _, t in _array_elements(iter(chunks), "t.json")] == [deep, '"x"', deep]


class _Counted:
    """A compiled pattern that counts the calls made on it."""
    calls = 0

    def __init__(self, pattern):
        self.pattern = pattern

    def __getattr__(self, name):
        method = getattr(self.pattern, name)

        def counted(*a, **k):
            _Counted.calls += 1
            return method(*a, **k)
        return counted


def test_the_scan_does_not_turn_once_a_bracket_or_a_string(monkeypatch):
    # The Python loop runs once a regex call; inside an element those calls are one a run of
    # brackets (not one a bracket), and strings and flat bracket pairs are skipped inside the regex.
    # 700,000 brackets and 150,000 strings in 6 elements, in 1 MiB pieces: a per-bracket or
    # per-string loop makes 100,000s of calls; this one a few a chunk and an element.
    for name, value in list(vars(formats).items()):
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(formats, name, _Counted(value))
    monkeypatch.setattr(_Counted, "calls", 0)
    deep = "[" * 100_000 + "]" * 100_000
    strings = "[" + ",".join(['""', '"[{"', "[]", '{"a":"}"}'] * 25_000) + "]"
    pairs = "[" + ",".join(['[[]]', '[{"a":"\\""}]'] * 25_000) + "]"   # short runs: scanned in numpy windows
    text = ("[" + ",".join([deep, strings, pairs, deep, strings, pairs]) + "]").encode()
    chunks = [text[i:i + 2**20] for i in range(0, len(text), 2**20)]
    assert len(list(_array_elements(iter(chunks), "t.json"))) == 6
    assert _Counted.calls < 100, _Counted.calls


def test_a_closing_brace_where_an_element_should_be_is_named_so():
    with pytest.raises(RecordError, match=r"^t.json: not a JSON array of records: b'\}' where an element should be "
                                          r"at byte 10$"):
        list(_array_elements(iter([b'[{"a":1}, }']), "t.json"))
    with pytest.raises(RecordError, match=r"b'\}' where an element should be at byte 1$"):
        list(_array_elements(iter([b'[}']), "t.json"))


def test_the_cli_numbers_a_bad_element_of_an_array_as_an_element(home):
    arr, lines = home / "small.json", home / "small.jsonl"
    arr.write_text("[\n  " + ",\n  ".join(RECORDS) + "\n]\n")
    lines.write_text("".join(r.replace("\n", "") + "\n" for r in RECORDS))
    out = run_cli("profile", str(arr), "--name", "arr", "--quiet").stdout
    assert "skipped 2 bad element(s):" in out and "  element 2: " in out and "  element 4: " in out
    assert "line 2" not in out
    out = run_cli("profile", str(lines), "--name", "lines", "--quiet").stdout
    assert "skipped 2 bad line(s):" in out and "  line 2: " in out and "  line 4: " in out


@pytest.mark.parametrize("size", [1, 5, 4096])
def test_the_numpy_windows_split_as_the_regex_scan_does(monkeypatch, size):
    # Past VECTOR_AFTER regex turns an element is scanned in numpy windows: with the switch at 0
    # (every element in windows) and never, the same elements, also of invalid JSON: a backslash
    # outside a string (the regex scan reads it), escapes in and around strings, a string cut by
    # the end of a window or piece.
    elements = _bracket_heavy(random.Random(7), 30_000) + [
        '[[\\"]"]]', '[[1], \\\\"x"]', '{"a": ["\\\\", "\\"", "\\\\\\""]}', "[" * 40 + '"' + "]" * 40 + '"' + "]" * 40]
    text = ("[" + ",".join(elements) + "]").encode()
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    got = {}
    for after in (0, 10**9):
        monkeypatch.setattr(formats, "VECTOR_AFTER", after)
        got[after] = [t.decode() for _, t in _array_elements(iter(chunks), "t.json")]
    assert got[0] == got[10**9] == elements
