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


def describe_validation_error(exc: Exception, prefix: str = "") -> str:
    """One line naming the first bad field of a pydantic ValidationError (or any error)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except Exception:  # pragma: no cover - defensive
            return str(exc)
        loc = ".".join(str(p) for p in first.get("loc", ()))
        if prefix:
            loc = f"{prefix}.{loc}" if loc else prefix
        value = first.get("input")
        msg = first.get("msg", "invalid")
        if isinstance(value, (dict, list)) and first.get("type") == "value_error":
            # a check across fields of a model: the message names them; the model's dump would say nothing
            return f"{loc or '(top level)'}: {msg.removeprefix('Value error, ')}"
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"{loc or '(top level)'}: {shown} is not allowed; {first.get('msg', 'invalid')}"
    return str(exc)
