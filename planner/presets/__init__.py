"""The presets: the yaml files here (models, GPUs, layouts, hardware, quality, ...) each number with
its source, and the code that reads them: specs.py (models, GPUs), layouts.py (pipeline layouts,
LAYER_RULES) and drafter_kinds.py (DRAFTER_KINDS: each drafter kind and its training FLOPs)."""
