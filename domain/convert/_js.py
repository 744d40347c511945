"""JavaScript's view of JSON values, as the AI SDK's converter sees them.

``String(value)``, ``String(number)``, ``JSON.stringify`` (number forms and key
order) and object spread: where the SDK's JavaScript shows through in the
model messages it builds.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Final

from chatledger.domain.tool_parts import MISSING

__all__ = ["js_string", "json_stringify", "spread"]


def spread(value: Any) -> dict[str, Any]:
    """The own enumerable properties that ``{...value}`` copies."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    if isinstance(value, str):  # a string spreads its UTF-16 code units
        units = value.encode("utf-16-le", "surrogatepass")
        return {
            str(index // 2): units[index : index + 2].decode("utf-16-le", "surrogatepass")
            for index in range(0, len(units), 2)
        }
    return {}


def js_string(value: Any) -> str:
    """``String(value)`` as ``Array.prototype.join`` uses it: null and undefined give ""."""
    if value is None or value is MISSING:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _js_number(value)
    if isinstance(value, list):
        return ",".join(js_string(item) for item in value)
    return "[object Object]"


def _js_number(value: int | float) -> str:
    """``String(number)``: shortest round-trip digits, exponent only beyond 1e21 or below 1e-6."""
    try:
        number = float(value)  # a JavaScript number is a double
    except OverflowError:  # JSON.parse reads a longer integer as Infinity
        number = math.inf if value > 0 else -math.inf
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = int(exponent) + len(digits)  # the value is 0.<digits> * 10**point
    sign = "-" if number < 0 else ""
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if point > 0 else '-'}{abs(point - 1)}"


_INDEX_KEY: Final = re.compile(r"0|[1-9][0-9]{0,9}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def json_stringify(value: Any) -> str:
    """``JSON.stringify(value)``: JavaScript's number forms and key order."""
    if value is None or isinstance(value, bool | str):
        quoted = json.dumps(value, ensure_ascii=False)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    if isinstance(value, int | float):
        number = _js_number(value)
        return "null" if number.endswith("Infinity") else number
    if isinstance(value, list):
        return "[" + ",".join(json_stringify(item) for item in value) + "]"
    # Objects list their array-index keys first, in numeric order.
    indices = sorted((k for k in value if _is_index(k)), key=int)
    keys = indices + [key for key in value if not _is_index(key)]
    return "{" + ",".join(f"{json_stringify(k)}:{json_stringify(value[k])}" for k in keys) + "}"


def _is_index(key: str) -> bool:
    return _INDEX_KEY.fullmatch(key) is not None and int(key) < 2**32 - 1
