"""Errors a user can cause, each naming the field, the value and what is allowed."""
from __future__ import annotations


class PlannerInputError(ValueError):
    """A bad input: `field` is the name the user knows (flag, manifest path, column), `value` what they gave."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{field}: {shown} is not allowed; {allowed}")


# pydantic's bound errors, said as what to give (issue 35: "0.5 is not allowed; Input should be greater than or
# equal to 1" for a value that is only too small)
_BOUNDS = {"greater_than_equal": ("too small", "ge", "{} or more"), "greater_than": ("too small", "gt", "more than {}"),
           "less_than_equal": ("too large", "le", "at most {}"), "less_than": ("too large", "lt", "less than {}")}


def _bound(value: object, kind: str, ctx: dict) -> str | None:
    """'0.5 is too small; give 1 or more', or None when `kind` is not a bound."""
    if kind not in _BOUNDS or not ctx:
        return None
    word, key, give = _BOUNDS[kind]
    limit = ctx.get(key)
    if limit is None:
        return None
    return f"{_shown(value)} is {word}; give {give.format(_number(limit))}"


def _number(x: object) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:,.10g}" if isinstance(x, float) else str(x)


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def describe_validation_error(exc: Exception, prefix: str = "", name=None) -> str:
    """One line naming the first bad field of a pydantic ValidationError (or any error). `name`: a
    function from the dotted path to the name a person knows the field by (a label, a flag; issue 35:
    not "budget.storage_tb"); '' leaves the name out (the caller says it)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except Exception:  # pragma: no cover - defensive
            return str(exc)
        loc = ".".join(str(p) for p in first.get("loc", ()))
        if prefix:
            loc = f"{prefix}.{loc}" if loc else prefix
        if name is not None:
            loc = name(loc)
        head = f"{loc}: " if loc else "" if name is not None else "(top level): "
        value = first.get("input")
        msg = first.get("msg", "invalid")
        if isinstance(value, (dict, list)):
            # a check across fields of a model, or a part given whole: the message names what is wrong;
            # the model's dump (every field of it) would say nothing (issue 35)
            return f"{head}{msg.removeprefix('Value error, ')}"
        bound = _bound(value, first.get("type", ""), first.get("ctx") or {})
        if bound is not None:
            return head + bound
        return f"{head}{_shown(value)} is not allowed; {msg}"
    return str(exc)
