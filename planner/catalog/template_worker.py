"""The chat-template renderer's child process (run as a script: it imports nothing of the planner).

A tokenizer_config.json's `chat_template` is a third-party program. It runs here, in Jinja's
immutable sandbox, inside a process the parent started under an address-space limit and a CPU-time
limit (template_render.py), and each rendering stops at an output budget of characters. Protocol,
one JSON object a line: the parent sends {"source", "special", "max_chars"} and then {"roles": [...]}
per sequence of roles; the answer is {"texts": [each prefix rendered]} or {"bound": why},
{"refused": why} (the template's raise_exception), {"error": why}. The first answer says whether
the template compiles ({"ok": true} or {"error": ...}).
"""
import datetime as dt
import json
import sys

MARK = "\ue000{}\ue001"


class OutputBound(Exception):
    pass


class Refused(Exception):
    pass


def _refuse(message):
    raise Refused(str(message)[:200])


def _environment():
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, indent=None, ensure_ascii=False, **_: json.dumps(
        x, indent=indent, ensure_ascii=ensure_ascii, default=str)
    env.globals["raise_exception"] = _refuse
    env.globals["strftime_now"] = lambda f: dt.datetime.now().strftime(f)
    return env


def _render(template, special: dict, roles: list, max_chars: int) -> list:
    texts = []
    for i in range(len(roles)):
        msgs = [{"role": r, "content": MARK.format(j)} for j, r in enumerate(roles[:i + 1])]
        parts, size = [], 0
        for piece in template.generate(messages=msgs, add_generation_prompt=False, tools=None, documents=None,
                                       **special):
            size += len(piece)
            if size > max_chars:
                raise OutputBound(f"its output is over the {max_chars:,}-character budget")
            parts.append(piece)
        texts.append("".join(parts))
    return texts


def _answer(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    head = json.loads(sys.stdin.readline())
    try:
        template = _environment().from_string(head["source"])
    except MemoryError:   # Jinja folds constants such as 'x' * 10**9 while compiling
        _answer({"bound": "it ran out of its memory limit while compiling"})
        return
    except Exception as exc:   # TemplateSyntaxError and kin
        _answer({"error": str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})
        return
    _answer({"ok": True})
    special, max_chars = head["special"], int(head["max_chars"])
    for line in sys.stdin:
        roles = json.loads(line)["roles"]
        try:
            _answer({"texts": _render(template, special, roles, max_chars)})
        except OutputBound as exc:
            _answer({"bound": str(exc)})
        except MemoryError:
            _answer({"bound": "it ran out of its memory limit"})
        except RecursionError:
            _answer({"bound": "it recursed too deeply"})
        except Refused as exc:
            _answer({"refused": str(exc)})
        except Exception as exc:   # a sandbox SecurityError, a template's own TypeError, ...
            _answer({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"})


if __name__ == "__main__":
    main()
