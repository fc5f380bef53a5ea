"""Bounded rendering of a third-party chat template (a tokenizer_config.json's `chat_template`).

Jinja's sandbox stops a template from reaching Python, not from running for ever or taking all the
memory (`range(100000)` nested twice, `'x' * 10**8`, a list doubled 40 times). So the template
renders in a child process (template_worker.py) started under an address-space limit
(RLIMIT_AS) and a CPU-time limit (RLIMIT_CPU); each request has a wall-clock timeout, and each
rendering an output budget in characters, so the text handed to the tokenizer is bounded too.
Whichever bound stops it is named (TemplateBound); the profile then counts with the flat estimate
and says why, and the process that profiles never aborts.

The bounds (env overrides, for tests and for unusual templates): PLANNER_TEMPLATE_MEMORY_MB (512),
PLANNER_TEMPLATE_SECONDS (10 a request), PLANNER_TEMPLATE_CPU_SECONDS (300 for the whole profile),
PLANNER_TEMPLATE_OUTPUT_CHARS (65,536 a rendering: a chat template's own text around the messages
is far shorter; the longest shipped default system prompts are a few thousand characters).
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import weakref
from pathlib import Path

WORKER = Path(__file__).resolve().with_name("template_worker.py")
MAX_ANSWER_BYTES = 64 * 2**20


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def limits() -> dict:
    return {"memory": int(_env_number("PLANNER_TEMPLATE_MEMORY_MB", 512) * 2**20),
            "seconds": _env_number("PLANNER_TEMPLATE_SECONDS", 10),
            "cpu": int(_env_number("PLANNER_TEMPLATE_CPU_SECONDS", 300)),
            "chars": int(_env_number("PLANNER_TEMPLATE_OUTPUT_CHARS", 65536))}


class TemplateBound(Exception):
    """A bound stopped the template (time, CPU, memory, output): the reason names it."""


class TemplateRefused(Exception):
    """The template raised (raise_exception, a sandbox refusal, its own error): the reason says which."""


class TemplateCompileError(Exception):
    pass


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for f in (proc.stdin, proc.stdout):
        if f is None:       # not a pipe (never here: both are)
            continue
        try:
            f.close()
        except OSError:
            pass


class Renderer:
    """One child process rendering one template, request by request."""

    def __init__(self, source: str, special: dict):
        self.limits = limits()
        memory, cpu = self.limits["memory"], self.limits["cpu"]

        def confine():   # in the child, before it runs Python
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

        self.proc = subprocess.Popen([sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=confine,
                                     env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"})
        self._finalizer = weakref.finalize(self, _stop, self.proc)
        self.buffer = b""
        first = self._ask({"source": source, "special": special, "max_chars": self.limits["chars"]})
        if "ok" not in first:
            self.close()
            if "bound" in first:
                raise TemplateBound(first["bound"])
            raise TemplateCompileError(str(first.get("error", "it does not compile")))

    def close(self) -> None:
        self._finalizer()

    def _ask(self, obj: dict) -> dict:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None        # both pipes (Popen above)
        try:
            stdin.write((json.dumps(obj) + "\n").encode("utf-8"))
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None
        deadline = time.monotonic() + self.limits["seconds"]
        fd = stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise TemplateBound(f"it took over {self.limits['seconds']:g} s to render (the time limit)")
            chunk = os.read(fd, 2**20)
            if not chunk:
                raise self._died()
            self.buffer += chunk
            if len(self.buffer) > MAX_ANSWER_BYTES:
                self.close()
                raise TemplateBound(f"its output is over the {self.limits['chars']:,}-character budget")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def _died(self) -> TemplateBound:
        import signal
        code = self.proc.wait()
        self.close()
        if code == -signal.SIGXCPU or code == -signal.SIGKILL:
            return TemplateBound(f"it used over {self.limits['cpu']:,} s of CPU (the CPU-time limit)")
        return TemplateBound(f"its renderer stopped (exit {code}; the {self.limits['memory'] // 2**20:,} MiB "
                             f"memory limit, most likely)")

    def render(self, roles: tuple) -> list[str]:
        """Each prefix of a conversation with these roles rendered (contents as markers)."""
        answer = self._ask({"roles": list(roles)})
        if "texts" in answer:
            return answer["texts"]
        if "bound" in answer:
            self.close()
            raise TemplateBound(answer["bound"])
        raise TemplateRefused(answer.get("refused") and f"it refused the roles ({answer['refused']})"
                              or f"it failed to render ({answer.get('error', 'no reason given')})")
