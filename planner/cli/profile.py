"""CLI: profile (measure a local dataset into the user catalog)."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time

from planner.catalog.profile import ProfileError, profile_file, target_tokenizer
from planner.cli._common import CliError, whole
from planner.cli._parser import add_command
from planner.ids import FAMILIES
from planner.presets.specs import model_presets
from planner.scenario import Scenario
from planner.text import printable

APPROXIMATE = "approximate"                       # the page's counter of the same name (io_panel.py)
DEFAULT_MODEL = Scenario.model_fields["model"].default   # the default scenario's target, written once there


def _progress_bar():
    state = {"last": 0.0, "t0": time.monotonic()}

    def show(fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - state["last"] < 0.5:
            return
        state["last"] = now
        width = 30
        filled = int(width * min(fraction, 1.0))
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {fraction:6.1%}  {now - state['t0']:6.1f}s",
              end="" if fraction < 1.0 else "\n", file=sys.stderr, flush=True)
    return show


def cmd_profile(args: argparse.Namespace) -> int:
    sample = whole("--sample", args.sample) if args.sample is not None else None
    seed = whole("--seed", args.seed)
    workers = whole("--workers", args.workers) if args.workers is not None else (os.cpu_count() or 1)
    try:
        r = profile_file(args.path, args.name, fmt=args.format, tokenizer=_counter(args.tokenizer, args.model),
                         strict=args.strict, family=args.family, progress=None if args.quiet else _progress_bar(),
                         replace=args.replace, sample=sample, seed=seed, workers=workers)
    except ProfileError as exc:
        raise CliError(printable(exc)) from exc
    c = r.component
    summary = {"id": c["id"], "conversations": r.conversations, "bad_lines": r.bad_lines,
               "bad_examples": [{"line": ln, "error": e} for ln, e in r.bad_examples],
               "mean_tokens": c["mean_tokens"], "median_tokens": c["median_tokens"], "turns": c["turns"],
               "assistant_share": c["assistant_share"], "tokenizer": r.tokenizer, "template": r.template,
               "template_fallbacks": r.template_fallbacks,
               "template_fallback_reasons": r.fallback_reasons, "files": r.files, "workers": r.workers,
               "sampled": r.sampled, "provenance": "measured"}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_text(r)
    return 0


def _counter(tokenizer: str | None, model: str) -> str | None:
    """The token counter: --tokenizer as given ('approximate': UTF-8 bytes / 4, None to profile_file),
    else the target's own built-in tokenizer where one ships (target_tokenizer, as the page's
    drafter_dashboard/io_panel.py default), else the approximation (issue 35 item 9)."""
    if model not in model_presets():
        raise CliError(f"--model: {printable(repr(model))} is not a known model; known models: "
                       f"{', '.join(model_presets())}")
    if tokenizer is not None:
        return None if tokenizer == APPROXIMATE else tokenizer
    return target_tokenizer(model)


def _interval(ci) -> str:
    return f"{ci[0]:,.1f}-{ci[1]:,.1f}" if ci else "n/a (too few rows)"


def _print_text(r) -> None:
    c = r.component
    cid = printable(c["id"])
    print(f"{cid}: {r.conversations:,} conversations, mean {c['mean_tokens']:,.0f} tokens "
          f"(median {c['median_tokens']:,.0f}), {c['turns']:.2f} assistant turns, "
          f"assistant share {c['assistant_share']:.0%} [{printable(r.tokenizer)}; template: {printable(r.template)}]")
    if r.sampled:
        s = r.sampled
        print(f"sampled {s['rows_sampled']:,} of {s['rows_total']:,} conversations (seed {s['seed']}): 95% interval "
              f"of mean tokens per conversation {_interval(s['mean_tokens_ci'])}, per turn "
              f"{_interval(s['mean_turn_tokens_ci'])}")
    if r.template_fallbacks:
        for why, k in sorted(r.fallback_reasons.items(), key=lambda x: -x[1]):
            print(f"{k:,} conversation(s) counted with the 4-token estimate: {printable(why)}")
    if r.bad_lines:
        word = r.row_word.split()[-1]     # a sampled row is numbered as in the sample, and still a row
        print(f"skipped {r.bad_lines:,} bad {word}(s){' in the sample' if r.sampled else ''}:")
        for ln, e in r.bad_examples:
            print(f"  {r.row_word} {ln}: {printable(e)}")
    # --add keeps the rest of the mix (--components would replace it: issue 35 item 9)
    add = printable(shlex.quote(f"{c['id']}={r.conversations}"))
    print(f"'{cid}' is now selectable; add it to the mix: planner estimate --add {add}")


def register_profile(sub) -> None:
    p = add_command(sub, "profile")
    p.add_argument("path", help="a JSONL/JSON/Parquet file, a directory of them, or a glob of shards "
                                "(quote it: 'data/train-*.parquet'), read as one dataset")
    p.add_argument("--name", required=True, help="component id to register")
    p.add_argument("--format", default="auto", choices=["auto", "sharegpt", "openai", "alpaca", "glaive"])
    p.add_argument("--tokenizer", help="a tokenizer.json (HF tokenizers), 'qwen3.6' (the Qwen3.5/3.6 vocabulary, "
                   f"offline) or '{APPROXIMATE}' (UTF-8 bytes / 4); default: the --model's own tokenizer where "
                   f"one ships, else {APPROXIMATE}")
    p.add_argument("--model", default=DEFAULT_MODEL, metavar="ID",
                   help=f"the target model whose tokenizer counts by default (default {DEFAULT_MODEL}, the "
                   "default scenario's)")
    p.add_argument("--family", default="general", choices=FAMILIES,
                   help="the domain of the data (the quality model's and the serving workload's families)")
    p.add_argument("--replace", action="store_true", help="replace a profiled component of the same id")
    p.add_argument("--strict", action="store_true", help="fail on the first bad line instead of skipping it")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--sample", metavar="N", help="measure a uniform sample of N rows (reservoir sampling; the "
                   "row count stays the dataset's) and report the 95%% interval of the means")
    p.add_argument("--seed", default="0", metavar="S", help="the sample's seed (default 0): one seed, one sample")
    p.add_argument("--workers", metavar="N", help="processes that parse and count a large input (default: the "
                   "machine's cores; 1: none). HF tokenizer.json counting already uses every core")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_profile)
