"""Exports that run end to end (issue 35 item 11): SpecForge's draft_config.json, written by the export in
SpecForge's own format, and a training command per pipeline's real CLI (pipeline_flags.yaml)."""
import json
import shlex

from planner.export.commands import EXPORT_FORMATS, specforge_draft_config
from tests.unit.planner.export.test_commands_pipeline_flags import _argv, manifest_for


def written(text: str, path: str) -> dict:
    """The JSON an export writes to `path` with `printf '%s\\n' 'line' ... > path`."""
    lines = text.split("\n")
    end = next(i for i, x in enumerate(lines) if x == f"    > {path}")
    start = max(i for i in range(end) if lines[i].startswith("printf "))
    return json.loads("\n".join(shlex.split(x.rstrip(" \\"))[0] for x in lines[start + 1:end]))


def test_dflash_draft_config_is_specforges_shape_with_the_planned_layers():
    # the default plan: Qwen3.6-27B (64 layers, hidden 5120, vocab 248,320), SpecForge DFlash, the DFlash
    # rule's 5 layers [1, 16, 31, 46, 61] (as SpecForge's own configs/qwen3.6-27b-dflash.json:13-19)
    m = manifest_for("specforge-dflash")
    text = EXPORT_FORMATS["specforge"].render(m, "m.yaml")
    cfg = written(text, "./draft_config.json")
    assert cfg == specforge_draft_config(m)
    # SpecForge's checks (model_loading.py:101-113 one registered architecture; model_providers.py:214-241
    # block_size >= 2 and non-empty dflash_config.target_layer_ids; prepare_hidden_states.py:199-226
    # a positive draft_vocab_size or vocab_size)
    assert cfg["architectures"] == ["DFlashDraftModel"] and cfg["block_size"] == 16
    assert cfg["dflash_config"]["target_layer_ids"] == [1, 16, 31, 46, 61]
    assert (cfg["num_hidden_layers"], cfg["num_target_layers"]) == (5, 64) and len(cfg["layer_types"]) == 5
    assert (cfg["hidden_size"], cfg["vocab_size"]) == (5120, 248320)
    # the capture reads the file the export writes
    argv = _argv(text, "prepare_hidden_states.py")
    assert argv[argv.index("--draft-model-config") + 1] == "./draft_config.json"


def test_eagle3_draft_config_names_three_aux_layers():
    # SpecForge EAGLE-3 over 64 layers: [1, L//2-1, L-4] = [1, 31, 60] (model_providers.py:188-211 wants
    # exactly three), one llama layer, draft vocabulary 32,000 (eagle3/providers.py:182-186)
    cfg = specforge_draft_config(manifest_for("specforge-eagle3"))
    assert cfg["eagle_config"] == {"eagle_aux_hidden_state_layer_ids": [1, 31, 60]}
    assert (cfg["architectures"], cfg["num_hidden_layers"], cfg["draft_vocab_size"]) == \
        (["LlamaForCausalLMEagle3"], 1, 32000)


def test_specforge_trains_on_what_it_captured():
    # 16 training GPUs, 8 a node: 2 nodes of 8; 2.5 epochs -> 3 whole epochs, said in a note
    m = manifest_for("specforge-dflash", training={"gpus": 16, "epochs": 2.5})
    text = EXPORT_FORMATS["specforge"].render(m, "m.yaml")
    cfg = written(text, "./train_config.json")
    capture = _argv(text, "prepare_hidden_states.py")
    assert cfg["data"]["hidden_states_path"] == capture[capture.index("--output-path") + 1]
    assert cfg["model"]["draft_model_config"] == "./draft_config.json"
    assert cfg["data"]["max_length"] == 2048 and cfg["training"] == {"strategy": "dflash", "num_epochs": 3}
    assert cfg["deployment"]["trainer"] == {"nnodes": 2, "nproc_per_node": 8}
    assert "trains 2.5 epochs" in text and "2 nodes of 8 GPUs" in text
    assert _argv(text, "train") [:4] == ["specforge", "train", "--config", "./train_config.json"]


def test_speculators_trains_where_it_captured():
    # capture into ./prepared/hidden_states, train.py --data-path ./prepared (data.py:163, 183); the
    # captured ids without the last layer: speculators' rule for 64 layers [2, 32, 61]
    text = EXPORT_FORMATS["speculators"].render(manifest_for("speculators"), "m.yaml")
    gen = _argv(text, "data_generation_offline.py")
    assert gen[gen.index("--output") + 1] == "./prepared/hidden_states"
    train = _argv(text, "scripts/train.py")
    v = lambda f: train[train.index(f) + 1]  # noqa: E731
    assert v("--data-path") == "./prepared" and v("--speculator-type") == "eagle3" and v("--epochs") == "3"
    i = train.index("--target-layer-ids")
    assert train[i + 1:i + 4] == ["2", "32", "61"] and train[i + 4] == "--num-layers"
    assert v("--total-seq-len") == "8192" and v("--nproc_per_node") == "8"


def test_modelopt_nemo_and_deepspec_train_from_what_they_captured():
    # Model-Optimizer: launch_train.sh on the EAGLE-3 recipe, offline from the dump's folder (README.md:120-129)
    text = EXPORT_FORMATS["modelopt"].render(manifest_for("modelopt-eagle3"), "m.yaml")
    dump = _argv(text, "compute_hidden_states_hf.py")
    train = _argv(text, "launch_train.sh")
    assert f"data.offline_data_path={dump[dump.index('--output-dir') + 1]}" in train
    assert "model.model_name_or_path=Qwen/Qwen3.6-27B" in train and "training.num_train_epochs=3" in train
    assert "training.training_seq_len=3072" in train      # the capture's cap: no row is cut again
    # NeMo Automodel: the cache precompute_eagle3 wrote, as recipe_args.cached_target_path (README.md:573)
    text = EXPORT_FORMATS["nemo-automodel"].render(manifest_for("nemo-automodel"), "m.yaml")
    cache = _argv(text, "precompute_eagle3")
    train = _argv(text, "llama_eagle3_mvp.yaml")
    assert train[:4] == ["automodel", "examples/speculative/eagle3/llama_eagle3_mvp.yaml", "--nproc-per-node", "8"]
    assert f"--recipe_args.cached_target_path={cache[cache.index('--output-dir') + 1]}" in train
    assert "--recipe_args.seq_length=2048" in train and "--recipe_args.num_epochs=3" in train
    # DeepSpec: train.py on the same config, the cache by --opts data.target_cache_path (train.sh)
    text = EXPORT_FORMATS["deepspec"].render(manifest_for("deepspec"), "m.yaml")
    cache = _argv(text, "prepare_target_cache.py")
    train = _argv(text, "train.py")
    assert train[train.index("--config") + 1] == cache[cache.index("--config") + 1]
    assert train[train.index("--opts") + 1] == f"data.target_cache_path={cache[cache.index('--output-dir') + 1]}"


def test_the_default_mix_dealt_over_ranks_carries_equal_bytes():
    # issue 35 item 11: the default mix over 3 Model-Optimizer ranks by contiguous blocks of 304,595 or
    # 304,596 rows held 7.5, 13.1 and 6.2 TB (the components' bytes per row differ, and a block takes them
    # in order). Dealt in turn, each rank holds every component's rows // 3 or one more: the ranks' bytes
    # differ by at most one row of each component, and no note is needed
    from planner import default_scenario
    from planner.export import sharding
    from planner.export.manifest import build_manifest
    from planner.export.slurm import Sharded, rank_commands
    m = build_manifest(default_scenario())
    x = Sharded(m, "modelopt", 3, "m.yaml")
    per = sharding.bytes_per_row(m, "modelopt-eagle3")
    assert max(x.predicted) - min(x.predicted) <= sum(per)
    assert abs(sum(x.predicted) - sum(b * c.rows_selected for b, c in zip(per, m.components, strict=True))) < 1e3
    assert max(x.predicted) < 1.001 * min(x.predicted)
    assert "# note: the ranks' bytes differ" not in rank_commands(m, "modelopt", 3)
    assert "# note: the ranks' bytes differ" not in rank_commands(m, "speculators", 3)
