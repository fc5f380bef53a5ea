"""Sampled profiling, datasets of several files, parallel counting, and what profiling counts
(tools once, the chat template's own tokens): hand-worked where the numbers allow it."""
import json
import os
import random

import duckdb
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from planner.catalog import formats, profile, sampling
from planner.catalog import user_catalog as uc
from planner.catalog.formats import dataset_files, to_turns
from planner.catalog.profile import ProfileError, profile_file
from planner.errors import PlannerInputError
from tests.helpers import run_cli
from tests.unit.planner.catalog.test_profile import _refused, write_jsonl


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    return tmp_path


def exchange(u: int, a: int) -> list[dict]:
    """A user message of u and an assistant message of a approximate tokens ("abcd" is 1 token)."""
    return [{"from": "human", "value": "abcd" * u}, {"from": "gpt", "value": "abcd" * a}]


def known_corpus(path, rows: int, seed: int = 1):
    """`rows` ShareGPT conversations: 1-3 exchanges, user 1..30 tokens, assistant log-normal (skewed)."""
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        convo = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            convo += exchange(rng.randint(1, 30), min(1 + int(rng.lognormvariate(3.5, 0.9)), 2000))
        out.append({"conversations": convo})
    return write_jsonl(path, out)


def turn_mean(component: dict) -> float:
    t = component["turn"]
    return sum(r * k for r, k in zip(t["rows"], t["tokens"], strict=False)) / sum(t["rows"])


# ---------------------------------------------------------------- reservoir sampling
def _final_reservoir(n: int, k: int, seed: int) -> set[int]:
    """The positions left in the reservoir after a stream of n items (Algorithm L's picks replayed)."""
    slots = {}
    for pos, slot in sampling.picks(k, seed):
        if pos >= n:
            break
        slots[slot] = pos
    return set(slots.values())


def test_reservoir_is_deterministic_per_seed():
    items = [f"item{i}" for i in range(1000)]
    a = sampling.reservoir(items, 50, seed=7)
    assert a == sampling.reservoir(items, 50, seed=7)
    assert a != sampling.reservoir(items, 50, seed=8)
    assert len(a) == 50 and [i for i, _ in a] == sorted(i for i, _ in a)
    assert all(items[i] == x for i, x in a)
    assert {i for i, _ in a} == _final_reservoir(1000, 50, 7)
    # fewer items than the reservoir: all of them, in order
    assert sampling.reservoir(items[:10], 50, seed=7) == list(enumerate(items[:10]))


def test_reservoir_is_uniform_over_positions():
    """10,000 items, k = 100, 3,000 seeds: every item is kept with probability 1/100, so each block of
    1,000 positions holds 10 of the 100 (30,000 over the seeds) and the first and last items are kept
    about 30 times each."""
    n, k, seeds = 10_000, 100, 3_000
    hits = [0] * n
    for seed in range(seeds):
        kept = _final_reservoir(n, k, seed)
        assert len(kept) == k
        for i in kept:
            hits[i] += 1
    blocks = [sum(hits[b:b + 1000]) for b in range(0, n, 1000)]
    # binomial sd of a block is about sqrt(30,000 * 0.9) = 164: 3% is over 5 sd
    assert all(abs(b - 30_000) < 900 for b in blocks), blocks
    assert 12 <= hits[0] <= 50 and 12 <= hits[-1] <= 50, (hits[0], hits[-1])
    mean = sum(hits) / n
    assert mean == pytest.approx(seeds * k / n)
    var = sum((h - mean) ** 2 for h in hits) / n
    assert var == pytest.approx(seeds * (k / n) * (1 - k / n), rel=0.1)   # each item binomial, not clumped


def test_the_chunked_line_reservoir_is_the_reservoir_of_the_lines(tmp_path, monkeypatch):
    """Chunks of 37 bytes cut lines anywhere; blank lines and a last line without a newline are
    lines; one reservoir runs over every file of the dataset."""
    monkeypatch.setattr(sampling, "CHUNK_BYTES", 37)
    rng = random.Random(3)
    lines = []
    for f in range(3):
        body = [("x" * rng.randint(0, 50)) for _ in range(40)]
        text = "\n".join(body) + ("\n" if f != 1 else "")
        (tmp_path / f"s-{f}.jsonl").write_text(text)
        lines += body
    ds = dataset_files(str(tmp_path / "s-*.jsonl"))
    for k in (1, 7, 200):
        for seed in range(10):
            kept, total = sampling.sample_jsonl(ds, k, seed)
            assert total == 120
            want = sampling.reservoir(lines, k, seed)
            assert [(r.line - 1, r.payload.rstrip(b"\n").decode()) for r in kept] == want
            assert all(r.file == f"s-{(r.line - 1) // 40}.jsonl" and r.at == (r.line - 1) % 40 + 1 for r in kept)


# ---------------------------------------------------------------- intervals
def test_intervals_hand_worked():
    # values 1..5: mean 3, sd sqrt(2.5); population 10 -> fpc sqrt(5/9)
    lo, hi = sampling.mean_ci([1, 2, 3, 4, 5], 10)
    half = 1.959963984540054 * (2.5 ** 0.5) / 5 ** 0.5 * (5 / 9) ** 0.5
    assert (lo, hi) == pytest.approx((3 - half, 3 + half))
    assert sampling.mean_ci([1, 2, 3, 4, 5], 5) == (3.0, 3.0)        # the whole population: no doubt left
    assert sampling.mean_ci([4], 1) == (4.0, 4.0) and sampling.mean_ci([4], 9) is None
    # ratio sum(y)/sum(x): y = 2x exactly -> no spread around the ratio
    assert sampling.ratio_ci([2, 4, 6], [1, 2, 3], 100) == pytest.approx((2.0, 2.0))


def test_the_sampled_interval_covers_the_full_scan_mean(home):
    """The issue's 'done means': on a corpus of known (skewed) distribution, 20,000 rows, samples of
    500 rows: the 95% interval covers the full-scan mean in at least 90 of 100 seeded trials, for
    tokens per conversation and per turn row alike."""
    f = known_corpus(home / "known.jsonl", 20_000)
    cat = home / "cat.json"
    full = profile_file(f, "full", user_catalog=cat)
    assert full.sampled is None and full.conversations == 20_000
    mean, tmean = full.component["mean_tokens"], turn_mean(full.component)
    covered = turn_covered = 0
    for seed in range(100):
        r = profile_file(f, "sampled", user_catalog=cat, replace=True, sample=500, seed=seed)
        s = r.sampled
        assert s["rows_sampled"] == 500 and s["rows_total"] == 20_000 and r.conversations == 20_000
        lo, hi = s["mean_tokens_ci"]
        assert lo < r.component["mean_tokens"] < hi
        covered += lo <= mean <= hi
        tlo, thi = s["mean_turn_tokens_ci"]
        turn_covered += tlo <= tmean <= thi
    assert covered >= 90 and turn_covered >= 90, (covered, turn_covered)


def test_a_sample_is_stored_with_the_total_rows_and_loads_back(home):
    f = known_corpus(home / "k.jsonl", 2_000)
    r = profile_file(f, "smp", sample=300, seed=11)
    again = profile_file(f, "smp2", sample=300, seed=11)
    assert again.component["conversation"] == r.component["conversation"]        # one seed, one sample
    c = r.component
    assert c["rows_available"] == c["rows_in_mix"] == 2_000 == r.conversations
    assert sum(c["conversation"]["rows"]) == pytest.approx(1.0)                # the distribution is the sample's
    entry = uc.load(home / "home" / "user_catalog.json")[0].get("smp")
    assert entry.sampled.rows_sampled == 300 and entry.sampled.rows_total == 2_000 and entry.sampled.seed == 11
    assert list(entry.sampled.mean_tokens_ci) == pytest.approx(r.sampled["mean_tokens_ci"])
    assert entry.template == "estimate: 4 tokens per message"
    assert "a sample of 300 of 2,000 conversations (seed 11)" in c["provenance"]["mean_tokens"]["source"]


def test_an_old_entry_without_the_new_fields_loads(home):
    f = write_jsonl(home / "o.jsonl", [{"instruction": "abcd", "output": "abcd"}])
    profile_file(f, "old")
    path = home / "home" / "user_catalog.json"
    raw = json.loads(path.read_text())
    for c in raw["components"]:
        c.pop("template"), c.pop("sampled")
    path.write_text(json.dumps(raw))
    cat, warning = uc.load(path)
    assert warning is None and cat.get("old").sampled is None and cat.get("old").template is None


def test_a_sample_larger_than_the_data_reads_everything(home):
    # conversations of 1+4 + 2+4 = 11 and 3+4 + 1+4 = 12 tokens (approximate counter)
    f = write_jsonl(home / "s.jsonl", [{"instruction": "abcd", "output": "abcdabcd"},
                                       {"instruction": "abcd" * 3, "output": "abcd"}, ""])
    r = profile_file(f, "all", sample=1000, seed=5)
    s = r.sampled
    assert s["rows_sampled"] == s["rows_total"] == 2 == r.conversations
    assert s["mean_tokens_ci"] == [11.5, 11.5] and s["mean_turn_tokens_ci"] == [11.5, 11.5]
    assert r.component["mean_tokens"] == pytest.approx(11.5)


def test_bad_lines_in_a_sample_scale_the_row_count(home):
    # 10 lines: 8 conversations, 1 bad, 1 blank; a sample of 10 sees all -> exactly 8 rows
    good = {"instruction": "abcd", "output": "abcd"}
    f = write_jsonl(home / "b.jsonl", [good] * 4 + ["{nope", ""] + [good] * 4)
    r = profile_file(f, "b", sample=10)
    assert r.conversations == 8 and r.bad_lines == 1 and r.bad_examples == [(5, "invalid JSON: Expecting "
                                                                               "property name enclosed in double "
                                                                               "quotes")]
    # a sample of 5 of the 10 lines: rows = 10 x (conversations among the 5) / 5
    r = profile_file(f, "b5", sample=5, seed=2)
    kept, _ = sampling.sample_jsonl(dataset_files(str(f)), 5, 2)
    valid = sum(1 for k in kept if formats.parse_payload(k.payload, "auto")[0] is not None)
    assert r.conversations == round(10 * valid / 5) and r.sampled["rows_sampled"] == valid


def test_sample_seed_and_workers_are_checked(home):
    f = write_jsonl(home / "d.jsonl", [{"instruction": "a", "output": "b"}])
    for kw, flag in (({"sample": 0}, "--sample"), ({"sample": -3}, "--sample"), ({"seed": -1}, "--seed"),
                     ({"seed": 2**63}, "--seed"), ({"workers": 0}, "--workers"), ({"sample": True}, "--sample")):
        with pytest.raises(PlannerInputError, match=flag):
            profile_file(f, "x", **kw)
    line = _refused(["profile", str(f), "--name", "x", "--sample", "0", "--quiet"], "--sample", home)
    assert "0 is not allowed" in line
    line = _refused(["profile", str(f), "--name", "x", "--workers", "many", "--quiet"], "--workers", home)
    assert "not a whole number" in line


# ---------------------------------------------------------------- datasets of several files
def _parquet(path, rows):
    con = duckdb.connect()
    values = ", ".join(f"('{i}', '{o}')" for i, o in rows)
    con.execute(f"COPY (SELECT * FROM (VALUES {values}) t(instruction, output)) TO '{path}' (FORMAT parquet)")
    con.close()


def test_a_directory_of_parquet_shards_is_one_dataset(home):
    d = home / "pq"
    d.mkdir()
    # shard 0: 1+4 + 1+4 = 10 and 2+4 + 2+4 = 12; shard 1: 3+4 + 1+4 = 12 (approximate counter)
    _parquet(d / "train-0.parquet", [("abcd", "abcd"), ("abcd" * 2, "abcd" * 2)])
    _parquet(d / "train-1.parquet", [("abcd" * 3, "abcd")])
    (d / "README.md").write_text("not data")
    r = profile_file(d, "pq")
    assert r.conversations == 3 and r.files == 2
    assert r.component["mean_tokens"] == pytest.approx((10 + 12 + 12) / 3)
    assert "2 files as pq" in r.component["provenance"]["mean_tokens"]["source"]
    # DuckDB's reservoir over both shards, one seed one sample; the row count is the dataset's
    a = profile_file(str(d / "train-*.parquet"), "pq_s", sample=2, seed=3)
    b = profile_file(str(d / "train-*.parquet"), "pq_s2", sample=2, seed=3)
    assert a.conversations == 3 and a.sampled["rows_sampled"] == 2 and a.sampled["rows_total"] == 3
    assert a.component["conversation"] == b.component["conversation"]
    everything = profile_file(str(d / "train-*.parquet"), "pq_all", sample=10)
    assert everything.sampled["mean_tokens_ci"] == [pytest.approx(34 / 3)] * 2
    # a JSON array is streamed through the same kind of reservoir; a bad element is named by its
    # position in the array, and judged as its JSONL line would be (no schema merges its keys)
    arr = home / "arr.json"
    arr.write_text(json.dumps([{"instruction": "abcd", "output": "abcd"}, {"text": "no conversation"}]))
    r = profile_file(arr, "arr", sample=5)
    assert r.conversations == 1 and r.sampled["rows_total"] == 1 and r.bad_lines == 1
    with pytest.raises(ProfileError, match=r"^arr.json: element 2: no conversation fields"):
        profile_file(arr, "arr2", sample=5, strict=True)


def test_a_glob_of_jsonl_shards_is_one_dataset_numbered_through(home):
    for i in range(3):
        write_jsonl(home / f"s-{i}.jsonl", [{"instruction": "abcd" * (i + 1), "output": "abcd"}, "{bad"])
    r = profile_file(str(home / "s-*.jsonl"), "shards")
    # 2+4+1+4 ... : (1+4+1+4) + (2+4+1+4) + (3+4+1+4) = 10 + 11 + 12
    assert r.conversations == 3 and r.files == 3 and r.component["mean_tokens"] == pytest.approx(11)
    assert r.bad_examples == [(2, f"s-{i}.jsonl: invalid JSON: Expecting property name enclosed in double quotes")
                              for i in range(3)]
    with pytest.raises(ProfileError, match=r"^s-0.jsonl: line 2: invalid JSON"):
        profile_file(str(home / "s-*.jsonl"), "strict", strict=True)
    # the records are numbered over the dataset (materialize selects rows by that number)
    lines = [(rec.line, rec.file, rec.at) for rec in formats.iter_records(str(home / "s-*.jsonl"))]
    assert lines == [(1, "s-0.jsonl", 1), (2, "s-0.jsonl", 2), (3, "s-1.jsonl", 1), (4, "s-1.jsonl", 2),
                     (5, "s-2.jsonl", 1), (6, "s-2.jsonl", 2)]
    assert r.component["local_path"] == os.path.abspath(str(home / "s-*.jsonl"))


def test_a_fifo_or_a_device_among_the_files_is_refused_by_name(home):
    d = home / "mixed"
    d.mkdir()
    write_jsonl(d / "a.jsonl", [{"instruction": "a", "output": "b"}])
    os.mkfifo(d / "b.jsonl")
    line = _refused(["profile", str(d), "--name", "m", "--quiet"], "PATH", home, may_hang=True)
    assert "b.jsonl" in line and "FIFO" in line
    line = _refused(["profile", str(d / "*.jsonl"), "--name", "m", "--sample", "5", "--quiet"], "PATH", home,
                    may_hang=True)
    assert "b.jsonl" in line and "FIFO" in line
    os.unlink(d / "b.jsonl")
    os.symlink("/dev/zero", d / "c.jsonl")
    line = _refused(["profile", str(d / "*.jsonl"), "--name", "m", "--quiet"], "PATH", home, may_hang=True)
    assert "c.jsonl" in line and "character device" in line


def test_empty_globs_empty_directories_mixed_types_and_too_many_files_are_refused(home, monkeypatch):
    line = _refused(["profile", str(home / "nothing-*.parquet"), "--name", "m", "--quiet"], "PATH", home)
    assert "nothing-*.parquet" in line and "no file matches this pattern" in line
    empty = home / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    line = _refused(["profile", str(empty), "--name", "m", "--quiet"], "PATH", home)
    assert "holds no .jsonl, .ndjson, .json or .parquet file" in line
    mixed = home / "mix"
    mixed.mkdir()
    write_jsonl(mixed / "a.jsonl", [{"instruction": "a", "output": "b"}])
    _parquet(mixed / "b.parquet", [("a", "b")])
    line = _refused(["profile", str(mixed), "--name", "m", "--quiet"], "PATH", home)
    assert "b.parquet" in line and "it is parquet but a.jsonl is jsonl" in line
    monkeypatch.setattr(formats, "MAX_DATASET_FILES", 1)
    with pytest.raises(PlannerInputError, match="more than 1 files"):
        dataset_files(str(mixed / "*"))
    with pytest.raises(PlannerInputError, match="more than 1 data files"):
        dataset_files(str(mixed))


# ---------------------------------------------------------------- parallel counting
@pytest.mark.parametrize("tokenizer,rows", [(None, 6_000), ("qwen3.6", 1_500)])
def test_parallel_counts_are_the_serial_counts(home, monkeypatch, tokenizer, rows):
    f = known_corpus(home / "p.jsonl", rows, seed=4)
    with open(f, "a") as fh:
        fh.write("{not json\n\n")
    monkeypatch.setattr(profile, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(profile, "PARALLEL_MIN_ROWS", 0)
    monkeypatch.setattr(profile, "BATCH", 500)
    serial = profile_file(f, "serial", tokenizer=tokenizer, workers=1)
    parallel = profile_file(f, "parallel", tokenizer=tokenizer, workers=2)
    assert serial.workers == 1 and parallel.workers == 2
    for key in ("conversation", "turn", "mean_tokens", "median_tokens", "assistant_share", "turns", "bad_lines",
                "sha256", "template"):
        assert serial.component[key] == parallel.component[key], key
    assert serial.bad_examples == parallel.bad_examples == [(rows + 1, "invalid JSON: Expecting property name "
                                                                       "enclosed in double quotes")]
    a = profile_file(f, "s_serial", tokenizer=tokenizer, workers=1, sample=rows // 2, seed=9)
    b = profile_file(f, "s_parallel", tokenizer=tokenizer, workers=2, sample=rows // 2, seed=9)
    assert b.workers == 2 and a.component["conversation"] == b.component["conversation"]
    assert a.sampled == b.sampled


def test_a_hf_tokenizer_or_a_small_input_stays_in_this_process(home, tmp_path):
    f = known_corpus(home / "p.jsonl", 50)
    assert profile_file(f, "small", workers=4).workers == 1      # under PARALLEL_MIN_BYTES
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["abcd"], trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    tok.save(str(tmp_path / "tokenizer.json"))
    assert not profile.Counter(str(tmp_path / "tokenizer.json")).pure_python
    assert profile.Counter(None).pure_python and profile.Counter("qwen3.6").pure_python


# ---------------------------------------------------------------- what profiling counts
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather of a city",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]


def _hermes_system(tools) -> str:
    return ("You are a function calling AI model. You are provided with function signatures within <tools></tools> "
            f"XML tags.\n<tools>\n{json.dumps(tools, indent=2)}\n</tools>")


def test_tools_written_into_the_system_prompt_are_not_counted_again():
    system = _hermes_system(TOOLS)
    hermes = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "weather?"},
                           {"role": "assistant", "content": "sunny"}], "tools": TOOLS}
    assert to_turns(hermes, "auto") == [("system", system), ("user", "weather?"), ("assistant", "sunny")]
    # ShareGPT with the tools as a JSON string (re-serialised compactly) and the prompt in `system`
    sharegpt = {"system": system, "tools": json.dumps(TOOLS, separators=(",", ":")),
                "conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}
    assert [r for r, _ in to_turns(sharegpt, "auto")] == ["system", "user", "assistant"]
    # only the name and the description in the prompt (another schema layout): still the definition
    described = {"messages": [{"role": "system", "content": "Tools: get_weather - Get the weather of a city"},
                              {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                 "tools": TOOLS}
    assert len(to_turns(described, "auto")) == 3


def test_tools_not_in_the_system_prompt_are_counted_once():
    plain = {"messages": [{"role": "system", "content": "You are helpful. You may call get_weather."},
                          {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "tools": TOOLS}
    turns = to_turns(plain, "auto")
    assert turns[0] == ("system", json.dumps(TOOLS[0], ensure_ascii=False)) and len(turns) == 4
    # ShareGPT with both a system prompt and tools: once the tools were dropped, now both count
    both = {"system": "Be brief.", "tools": json.dumps(TOOLS),
            "conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}
    assert to_turns(both, "auto")[:2] == [("system", "Be brief."), ("system", json.dumps(TOOLS))]
    # two tools, one in the prompt: the other alone is counted
    other = {"type": "function", "function": {"name": "get_time", "description": "The time in a city now"}}
    half = dict(plain, tools=TOOLS + [other],
                messages=[{"role": "system", "content": _hermes_system(TOOLS)}] + plain["messages"][1:])
    assert to_turns(half, "auto")[0] == ("system", json.dumps(other))


def test_hermes_record_token_count_hand_worked(home):
    system = "abcd" * 10 + json.dumps(TOOLS)
    hermes = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "abcd"},
                           {"role": "assistant", "content": "abcd"}], "tools": TOOLS}
    f = write_jsonl(home / "h.jsonl", [hermes])
    r = profile_file(f, "hermes")
    # system ceil(len/4) + 4, user 1 + 4, assistant 1 + 4: the tools once, inside the system prompt
    assert r.component["mean_tokens"] == pytest.approx(-(-len(system) // 4) + 4 + 5 + 5)


# ---------------------------------------------------------------- chat templates
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def _word_tokenizer(folder, config: dict | None):
    """One token a word; <|im_start|> and <|im_end|> special (1 token each); role names unknown (1 each)."""
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["alpha beta gamma"],
                            trainers.WordLevelTrainer(special_tokens=["[UNK]", "<|im_start|>", "<|im_end|>"]))
    folder.mkdir(exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return str(folder / "tokenizer.json")


RECORD = {"conversations": [{"from": "human", "value": "alpha beta"}, {"from": "gpt", "value": "gamma"},
                            {"from": "human", "value": "alpha"}, {"from": "gpt", "value": "beta gamma alpha"}]}


def test_the_rendered_chat_template_is_counted(home):
    tok = _word_tokenizer(home / "tk", {"chat_template": CHATML, "eos_token": "<|im_end|>"})
    f = write_jsonl(home / "c.jsonl", [RECORD])
    r = profile_file(f, "rendered", tokenizer=tok)
    assert r.template == r.component["template"] == "rendered (tokenizer_config.json)"
    # each message: <|im_start|> + role (1 unknown word) + <|im_end|> = 3 template tokens;
    # contents 2, 1, 1, 3 -> 5, 4, 4, 6 = 19; per-turn rows: 9 and 19
    assert r.component["mean_tokens"] == pytest.approx(19)
    assert sorted(r.component["turn"]["tokens"]) == pytest.approx([9, 19])
    assert r.component["assistant_share"] == pytest.approx(10 / 19)
    assert uc.load(home / "home" / "user_catalog.json")[0].get("rendered").template == r.template
    # a template with a default system prompt: the first message carries it (2 words more)
    sysdefault = ("{% if messages[0]['role'] != 'system' %}<|im_start|>system\nalpha beta<|im_end|>\n{% endif %}"
                  + CHATML)
    tok2 = _word_tokenizer(home / "tk2", {"chat_template": [{"name": "default", "template": sysdefault}]})
    r2 = profile_file(f, "rendered2", tokenizer=tok2)
    assert r2.component["mean_tokens"] == pytest.approx(19 + 5)      # <|im_start|> system alpha beta <|im_end|>


def test_a_template_that_refuses_falls_back_to_the_estimate(home):
    strict = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}"
              "{% endif %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
    tok = _word_tokenizer(home / "tk", {"chat_template": strict})
    f = write_jsonl(home / "c.jsonl", [RECORD, {"system": "alpha", **RECORD}])
    r = profile_file(f, "refusing", tokenizer=tok)
    assert r.template == "rendered (tokenizer_config.json)" and r.template_fallbacks == 1
    # 19 rendered; the one with a system turn: contents 1+2+1+1+3 = 8, plus 5 x 4 estimated = 28
    assert r.component["mean_tokens"] == pytest.approx((19 + 28) / 2)


def test_template_labels_without_a_template(home):
    f = write_jsonl(home / "c.jsonl", [RECORD])
    no_config = _word_tokenizer(home / "bare", None)
    r = profile_file(f, "bare", tokenizer=no_config)
    assert r.template == "estimate: 4 tokens per message (no tokenizer_config.json beside the tokenizer)"
    assert r.component["mean_tokens"] == pytest.approx(7 + 16)
    broken = _word_tokenizer(home / "broken", {"chat_template": "{% for m in messages %}"})
    assert profile_file(f, "broken", tokenizer=broken).template.startswith(
        "estimate: 4 tokens per message (the chat_template does not compile")
    assert profile_file(f, "approx").template == "estimate: 4 tokens per message"
    fifo_dir = home / "fifo_dir"
    _word_tokenizer(fifo_dir, None)
    os.mkfifo(fifo_dir / "tokenizer_config.json")
    with pytest.raises(PlannerInputError, match="FIFO"):
        profile_file(f, "fifo", tokenizer=str(fifo_dir / "tokenizer.json"))


def test_qwen_chatml_is_rendered_exactly(home):
    f = write_jsonl(home / "q.jsonl", [{"conversations": [{"from": "human", "value": "hello world"},
                                                          {"from": "gpt", "value": "hi there"}]}])
    r = profile_file(f, "qwen", tokenizer="qwen3.6")
    assert r.template == r.component["template"] == "ChatML (qwen3.6)"
    # "user\nhello world" is 4 tokens (user, \n, hello, " world"), "assistant\nhi there" 4; each message
    # adds <|im_start|>, <|im_end|> and the closing "\n": 7 + 7
    assert r.component["mean_tokens"] == pytest.approx(14)
    assert r.component["assistant_share"] == pytest.approx(0.5)


def test_the_cli_shows_the_interval_and_the_template(home):
    f = known_corpus(home / "k.jsonl", 500)
    r = run_cli("profile", str(f), "--name", "cli_s", "--sample", "100", "--seed", "3", "--json", "--quiet",
                "--workers", "1", "--tokenizer", "approximate")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["conversations"] == 500 and d["sampled"]["rows_sampled"] == 100 and d["sampled"]["seed"] == 3
    lo, hi = d["sampled"]["mean_tokens_ci"]
    assert lo < d["mean_tokens"] < hi and d["template"] == "estimate: 4 tokens per message"
    r = run_cli("profile", str(f), "--name", "cli_t", "--sample", "100", "--quiet", "--tokenizer", "approximate")
    assert r.returncode == 0, r.stderr
    assert "sampled 100 of 500 conversations (seed 0): 95% interval of mean tokens per conversation" in r.stdout
    assert "template: estimate: 4 tokens per message" in r.stdout


def test_a_hostile_tool_list_is_counted_not_searched():
    """20,000 tools against a 100 KB prompt: searching each would be 2e9 byte comparisons; they are
    counted as they are instead, at once."""
    import time
    tools = [{"name": f"t{i}", "description": "a tool of no use"} for i in range(20_000)]
    rec = {"messages": [{"role": "system", "content": "y" * 100_000}, {"role": "user", "content": "q"},
                        {"role": "assistant", "content": "a"}], "tools": tools}
    t = time.perf_counter()
    turns = to_turns(rec, "auto")
    assert time.perf_counter() - t < 2.0
    assert len(turns) == 4 and turns[0][1].count("\n") == 19_999
