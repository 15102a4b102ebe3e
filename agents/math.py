"""Math scope: a safe calculator, summary statistics and unit conversion."""

from __future__ import annotations

import ast
import math
import operator
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import get_close_matches

from langchain_core.tools import BaseTool, ToolException, tool

DESCRIPTION = "arithmetic, statistics and unit conversion"

Number = int | float

MAX_EXPRESSION_LENGTH = 500
MAX_EXPONENT = 10_000
MAX_FACTORIAL = 170
MAX_COMBINATORICS_N = 1_000
MAX_ROUND_DIGITS = 308
MAX_MAGNITUDE = 1e308
MAX_STATISTICS_VALUES = 10_000


class CalculationError(ValueError):
    """An expression was rejected or could not be evaluated."""


# --------------------------------------------------------------------------- evaluator


_TOO_LARGE = "result is too large (magnitude must stay below 1e308)"


def _checked(value: object) -> Number:
    """Return value if it is a finite real number within MAX_MAGNITUDE, else raise."""
    if isinstance(value, complex):
        msg = "result is not a real number (e.g. a fractional power of a negative number)"
        raise CalculationError(msg)
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"unsupported value {value!r}: only numbers are allowed"
        raise CalculationError(msg)
    if isinstance(value, float) and math.isnan(value):
        msg = "result is undefined (not a number)"
        raise CalculationError(msg)
    if (isinstance(value, float) and math.isinf(value)) or abs(value) > MAX_MAGNITUDE:
        raise CalculationError(_TOO_LARGE)
    return value


def _as_int(function: str, value: Number) -> int:
    """Return value as an int, or raise if it is not a whole number."""
    if isinstance(value, int):
        return value
    if value.is_integer():
        return int(value)
    msg = f"{function}() needs whole numbers, got {_format(value)}"
    raise CalculationError(msg)


def _power(base: Number, exponent: Number) -> Number:
    """Raise base to exponent after checking that the result stays small enough."""
    if abs(exponent) > MAX_EXPONENT:
        msg = f"exponent {_format(exponent)} is too large (the limit is {MAX_EXPONENT})"
        raise CalculationError(msg)
    if exponent > 0 and abs(base) > 1 and exponent * math.log10(abs(base)) > 308:
        raise CalculationError(_TOO_LARGE)
    return _checked(base**exponent)


def _factorial(value: Number) -> int:
    n = _as_int("factorial", value)
    if not 0 <= n <= MAX_FACTORIAL:
        msg = f"factorial() needs a whole number from 0 to {MAX_FACTORIAL}, got {n}"
        raise CalculationError(msg)
    return math.factorial(n)


def _combinatoric(name: str, impl: Callable[[int, int], int]) -> Callable[..., Number]:
    def apply(n: Number, k: Number) -> int:
        n_int, k_int = _as_int(name, n), _as_int(name, k)
        if not 0 <= n_int <= MAX_COMBINATORICS_N or k_int < 0:
            msg = f"{name}() needs 0 <= n <= {MAX_COMBINATORICS_N} and k >= 0"
            raise CalculationError(msg)
        return impl(n_int, k_int)

    return apply


def _integer_function(name: str, impl: Callable[..., int]) -> Callable[..., Number]:
    def apply(*args: Number) -> int:
        return impl(*(_as_int(name, arg) for arg in args))

    return apply


def _round(value: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(value)
    digits = _as_int("round", ndigits)
    if abs(digits) > MAX_ROUND_DIGITS:
        msg = f"round() digits must be between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}"
        raise CalculationError(msg)
    return round(value, digits)


def _log(value: Number, base: Number | None = None) -> float:
    return math.log(value) if base is None else math.log(value, base)


@dataclass(frozen=True)
class _Function:
    impl: Callable[..., Number]
    min_args: int
    max_args: int | None  # None: any number of arguments


CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

FUNCTIONS: dict[str, _Function] = {
    "sqrt": _Function(math.sqrt, 1, 1),
    "cbrt": _Function(math.cbrt, 1, 1),
    "abs": _Function(abs, 1, 1),
    "round": _Function(_round, 1, 2),
    "floor": _Function(math.floor, 1, 1),
    "ceil": _Function(math.ceil, 1, 1),
    "trunc": _Function(math.trunc, 1, 1),
    "log": _Function(_log, 1, 2),
    "log10": _Function(math.log10, 1, 1),
    "log2": _Function(math.log2, 1, 1),
    "exp": _Function(math.exp, 1, 1),
    "sin": _Function(math.sin, 1, 1),
    "cos": _Function(math.cos, 1, 1),
    "tan": _Function(math.tan, 1, 1),
    "asin": _Function(math.asin, 1, 1),
    "acos": _Function(math.acos, 1, 1),
    "atan": _Function(math.atan, 1, 1),
    "atan2": _Function(math.atan2, 2, 2),
    "sinh": _Function(math.sinh, 1, 1),
    "cosh": _Function(math.cosh, 1, 1),
    "tanh": _Function(math.tanh, 1, 1),
    "degrees": _Function(math.degrees, 1, 1),
    "radians": _Function(math.radians, 1, 1),
    "hypot": _Function(math.hypot, 1, None),
    "factorial": _Function(_factorial, 1, 1),
    "comb": _Function(_combinatoric("comb", math.comb), 2, 2),
    "perm": _Function(_combinatoric("perm", math.perm), 2, 2),
    "gcd": _Function(_integer_function("gcd", math.gcd), 1, None),
    "lcm": _Function(_integer_function("lcm", math.lcm), 1, None),
    "min": _Function(min, 1, None),
    "max": _Function(max, 1, None),
}

_BINARY_OPERATORS: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
}

_UNSUPPORTED_OPERATORS: dict[type[ast.operator], str] = {
    ast.BitXor: "'^' is not supported; use ** for powers",
    ast.BitAnd: "'&' (bitwise and) is not supported",
    ast.BitOr: "'|' (bitwise or) is not supported",
    ast.LShift: "'<<' (shift) is not supported",
    ast.RShift: "'>>' (shift) is not supported",
    ast.MatMult: "'@' (matrix multiplication) is not supported",
}

_NODE_NAMES: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "indexing",
    ast.Lambda: "lambda",
    ast.Compare: "comparison",
    ast.BoolOp: "boolean logic",
    ast.IfExp: "conditional expression",
    ast.Tuple: "a tuple (commas only separate function arguments; write 1000, not 1,000)",
    ast.List: "a list",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.ListComp: "a comprehension",
    ast.GeneratorExp: "a generator",
    ast.NamedExpr: "assignment",
    ast.JoinedStr: "a string",
    ast.Starred: "argument unpacking",
}

_REPLACEMENTS = {"×": "*", "÷": "/", "−": "-", "–": "-"}


def _format(value: Number) -> str:
    """Format a number compactly: exact for ints, 15 significant digits for floats."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value)


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        msg = f"{_NODE_NAMES.get(type(node.func), 'this kind of call')} is not allowed"
        raise CalculationError(msg)
    name = node.func.id
    spec = FUNCTIONS.get(name)
    if spec is None:
        msg = f"unknown function '{name}'; allowed functions: {', '.join(sorted(FUNCTIONS))}"
        raise CalculationError(msg)
    if node.keywords:
        msg = f"{name}() takes no keyword arguments"
        raise CalculationError(msg)
    args = [_eval_node(arg) for arg in node.args]
    if len(args) < spec.min_args or (spec.max_args is not None and len(args) > spec.max_args):
        if spec.max_args is None:
            expected = f"at least {spec.min_args}"
        elif spec.min_args == spec.max_args:
            expected = str(spec.min_args)
        else:
            expected = f"{spec.min_args} to {spec.max_args}"
        msg = f"{name}() takes {expected} argument(s), got {len(args)}"
        raise CalculationError(msg)
    try:
        return _checked(spec.impl(*args))
    except CalculationError:
        raise
    except (ValueError, TypeError) as exc:
        shown = ", ".join(_format(arg) for arg in args)
        msg = f"{name}({shown}) is undefined (math domain error)"
        raise CalculationError(msg) from exc


def _eval_node(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, complex):
            msg = "complex numbers are not supported"
            raise CalculationError(msg)
        return _checked(node.value)
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in FUNCTIONS:
            msg = f"'{node.id}' is a function; call it like {node.id}(x)"
            raise CalculationError(msg)
        msg = f"unknown name '{node.id}'; allowed constants: {', '.join(sorted(CONSTANTS))}"
        raise CalculationError(msg)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        operand = _eval_node(node.operand)
        return operand if isinstance(node.op, ast.UAdd) else -operand
    if isinstance(node, ast.BinOp):
        op_type = type(node.op)
        if op_type in _UNSUPPORTED_OPERATORS:
            raise CalculationError(_UNSUPPORTED_OPERATORS[op_type])
        return _checked(_BINARY_OPERATORS[op_type](_eval_node(node.left), _eval_node(node.right)))
    if isinstance(node, ast.Call):
        return _call(node)
    what = _NODE_NAMES.get(type(node), f"'{type(node).__name__}' syntax")
    msg = f"{what} is not allowed in a calculation"
    raise CalculationError(msg)


def _check_size(size: int, limit: int, empty: str, too_large: str) -> None:
    """Refuse an empty input (`empty`) and one larger than `limit` (`too_large`), before any
    work is done on it."""
    if not size:
        raise CalculationError(empty)
    if size > limit:
        raise CalculationError(too_large)


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic expression without eval(): only whitelisted syntax is executed."""
    text = expression.strip()
    for old, new in _REPLACEMENTS.items():
        text = text.replace(old, new)
    text = text.rstrip("=").strip()
    too_long = f"expression is too long ({len(text)} characters, limit {MAX_EXPRESSION_LENGTH})"
    _check_size(len(text), MAX_EXPRESSION_LENGTH, "empty expression", too_long)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        msg = f"invalid syntax: {exc.msg}"
        raise CalculationError(msg) from None
    except (RecursionError, MemoryError):
        msg = "expression is nested too deeply"
        raise CalculationError(msg) from None
    try:
        return _checked(_eval_node(tree.body))
    except ZeroDivisionError:
        msg = "division by zero"
        raise CalculationError(msg) from None
    except OverflowError:
        raise CalculationError(_TOO_LARGE) from None
    except RecursionError:
        msg = "expression is nested too deeply"
        raise CalculationError(msg) from None


# --------------------------------------------------------------------------- statistics


def summarize(numbers: Sequence[float]) -> dict[str, Number | None]:
    """Return count, sum, mean, median, min, max, range and standard deviations of numbers."""
    too_many = f"too many numbers ({len(numbers)}; the limit is {MAX_STATISTICS_VALUES})"
    _check_size(len(numbers), MAX_STATISTICS_VALUES, "no numbers given", too_many)
    values = [float(x) for x in numbers]
    if not all(math.isfinite(x) for x in values):
        msg = "numbers must be finite (no inf or nan)"
        raise CalculationError(msg)
    try:
        return {
            "count": len(values),
            "sum": math.fsum(values),
            "mean": statistics.fmean(values),
            "median": statistics.median(values),
            "min": min(values),
            "max": max(values),
            "range": max(values) - min(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else None,
            "pstdev": statistics.pstdev(values),
        }
    except OverflowError:
        msg = "numbers are too large to summarise"
        raise CalculationError(msg) from None


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class Unit:
    """A unit as a linear map to its dimension's base unit: base = value * factor + offset."""

    symbol: str
    dimension: str
    factor: float
    offset: float = 0.0


_UNIT_TABLE: list[tuple[str, str, float, float, tuple[str, ...]]] = [
    # symbol, dimension, factor to base unit, offset, aliases
    ("m", "length", 1.0, 0.0, ("meter", "meters", "metre", "metres")),
    ("km", "length", 1000.0, 0.0, ("kilometer", "kilometers", "kilometre", "kilometres")),
    ("cm", "length", 0.01, 0.0, ("centimeter", "centimeters", "centimetre", "centimetres")),
    ("mm", "length", 0.001, 0.0, ("millimeter", "millimeters", "millimetre", "millimetres")),
    ("mi", "length", 1609.344, 0.0, ("mile", "miles")),
    ("yd", "length", 0.9144, 0.0, ("yard", "yards")),
    ("ft", "length", 0.3048, 0.0, ("foot", "feet")),
    ("in", "length", 0.0254, 0.0, ("inch", "inches")),
    ("nmi", "length", 1852.0, 0.0, ("nautical mile", "nautical miles")),
    ("kg", "mass", 1.0, 0.0, ("kilogram", "kilograms", "kilo", "kilos")),
    ("g", "mass", 0.001, 0.0, ("gram", "grams")),
    ("mg", "mass", 1e-6, 0.0, ("milligram", "milligrams")),
    ("t", "mass", 1000.0, 0.0, ("tonne", "tonnes", "metric ton", "metric tons")),
    ("lb", "mass", 0.45359237, 0.0, ("lbs", "pound", "pounds")),
    ("oz", "mass", 0.028349523125, 0.0, ("ounce", "ounces")),
    ("st", "mass", 6.35029318, 0.0, ("stone", "stones")),
    ("l", "volume", 1.0, 0.0, ("liter", "liters", "litre", "litres")),
    ("ml", "volume", 0.001, 0.0, ("milliliter", "milliliters", "millilitre", "millilitres")),
    ("cl", "volume", 0.01, 0.0, ("centiliter", "centiliters", "centilitre", "centilitres")),
    ("m³", "volume", 1000.0, 0.0, ("cubic meter", "cubic meters", "cubic metre")),
    ("gal", "volume", 3.785411784, 0.0, ("gallon", "gallons", "us gallon", "us gallons")),
    ("imp gal", "volume", 4.54609, 0.0, ("imperial gallon", "imperial gallons", "uk gallon")),
    ("qt", "volume", 0.946352946, 0.0, ("quart", "quarts")),
    ("pt", "volume", 0.473176473, 0.0, ("pint", "pints", "us pint")),
    ("cup", "volume", 0.2365882365, 0.0, ("cups", "us cup")),
    ("fl oz", "volume", 0.0295735295625, 0.0, ("fluid ounce", "fluid ounces", "floz")),
    ("tbsp", "volume", 0.01478676478125, 0.0, ("tablespoon", "tablespoons")),
    ("tsp", "volume", 0.00492892159375, 0.0, ("teaspoon", "teaspoons")),
    ("m²", "area", 1.0, 0.0, ("square meter", "square meters", "sq m")),
    ("km²", "area", 1e6, 0.0, ("square kilometer", "square kilometers", "sq km")),
    ("ha", "area", 1e4, 0.0, ("hectare", "hectares")),
    ("acre", "area", 4046.8564224, 0.0, ("acres",)),
    ("ft²", "area", 0.09290304, 0.0, ("square foot", "square feet", "sq ft")),
    ("mi²", "area", 2589988.110336, 0.0, ("square mile", "square miles", "sq mi")),
    ("m/s", "speed", 1.0, 0.0, ("mps", "meters per second", "metres per second")),
    ("km/h", "speed", 1 / 3.6, 0.0, ("kmh", "kph", "kilometers per hour", "kilometres per hour")),
    ("mph", "speed", 0.44704, 0.0, ("mi/h", "miles per hour")),
    ("kn", "speed", 1852 / 3600, 0.0, ("kt", "knot", "knots")),
    ("ft/s", "speed", 0.3048, 0.0, ("fps", "feet per second")),
    ("s", "time", 1.0, 0.0, ("sec", "second", "seconds")),
    ("min", "time", 60.0, 0.0, ("minute", "minutes")),
    ("h", "time", 3600.0, 0.0, ("hr", "hour", "hours")),
    ("day", "time", 86400.0, 0.0, ("d", "days")),
    ("week", "time", 604800.0, 0.0, ("wk", "weeks")),
    ("K", "temperature", 1.0, 0.0, ("kelvin",)),
    ("°C", "temperature", 1.0, 273.15, ("c", "degc", "celsius", "centigrade")),
    ("°F", "temperature", 5 / 9, 273.15 - 32 * 5 / 9, ("f", "degf", "fahrenheit")),
]


def _unit_key(name: str) -> str:
    """Normalise a unit name for lookup: case, spacing and superscript digits don't matter."""
    return " ".join(name.replace("²", "2").replace("³", "3").split()).casefold()


UNITS: dict[str, Unit] = {}
for _symbol, _dimension, _factor, _offset, _aliases in _UNIT_TABLE:
    _unit = Unit(_symbol, _dimension, _factor, _offset)
    for _key in (_symbol, *_aliases):
        UNITS[_unit_key(_key)] = _unit


def _lookup_unit(name: str) -> Unit:
    key = _unit_key(name)
    unit = UNITS.get(key)
    if unit is not None:
        return unit
    suggestions = get_close_matches(key, list(UNITS), n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(suggestions)}?"
        if suggestions
        else f"supported units: {', '.join(row[0] for row in _UNIT_TABLE)}"
    )
    msg = f"unknown unit '{name}'; {hint}"
    raise CalculationError(msg)


def convert(value: float, from_unit: str, to_unit: str) -> tuple[float, Unit, Unit]:
    """Convert value between two units of the same dimension; return (result, source, target)."""
    source, target = _lookup_unit(from_unit), _lookup_unit(to_unit)
    if source.dimension != target.dimension:
        msg = (
            f"cannot convert {source.dimension} ({source.symbol}) "
            f"to {target.dimension} ({target.symbol})"
        )
        raise CalculationError(msg)
    if not math.isfinite(value):
        msg = "value must be a finite number"
        raise CalculationError(msg)
    base = value * source.factor + source.offset
    if source.dimension == "temperature" and base < -1e-9:
        msg = f"{_format(value)} {source.symbol} is below absolute zero"
        raise CalculationError(msg)
    return (base - target.offset) / target.factor, source, target


def _short(value: float) -> str:
    """Format a measurement with 10 significant digits."""
    return _format(float(f"{value:.10g}"))


# --------------------------------------------------------------------------- tools


@tool(parse_docstring=True)
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression precisely; use it for any arithmetic instead of estimating.

    Supports numbers, + - * / // % ** and parentheses, the constants pi, e, tau and the
    functions sqrt, cbrt, abs, round, floor, ceil, trunc, log (natural, or log(x, base)), log10,
    log2, exp, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh (radians), degrees,
    radians, hypot, factorial, comb, perm, gcd, lcm, min, max.

    Args:
        expression: One expression, e.g. "2 * (3 + 4) ** 2" or "sqrt(2) * pi".

    Returns:
        The result alone, e.g. "98"; integers are exact, floats have 15 significant digits.
    """
    try:
        result = evaluate(expression)
    except CalculationError as exc:
        msg = f"cannot evaluate {expression.strip()!r}: {exc}"
        raise ToolException(msg) from exc
    return _format(result)


@tool(parse_docstring=True)
def summary_statistics(numbers: list[float]) -> str:
    """Compute count, sum, mean, median, min, max, range and standard deviations of a list.

    Args:
        numbers: The data values, e.g. [2, 4, 4, 5, 7].
    """
    try:
        stats = summarize(numbers)
    except CalculationError as exc:
        raise ToolException(str(exc)) from exc
    labels = {
        "stdev": "sample stdev",
        "pstdev": "population stdev",
    }
    return "\n".join(
        f"{labels.get(key, key)}: {'n/a (needs 2+ values)' if value is None else _format(value)}"
        for key, value in stats.items()
    )


@tool(parse_docstring=True)
def convert_units(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a quantity between units of length, mass, volume, area, speed, time or temperature.

    Units are symbols or names, e.g. km, mi, ft, kg, lb, l, gal (US), cup, m2, acre, km/h, mph,
    kn, h, °C (or C, celsius), °F, K.

    Args:
        value: The quantity to convert.
        from_unit: The unit of value.
        to_unit: The unit to convert to.
    """
    try:
        result, source, target = convert(value, from_unit, to_unit)
    except CalculationError as exc:
        raise ToolException(str(exc)) from exc
    return f"{_short(value)} {source.symbol} = {_short(result)} {target.symbol}"


TOOLS: list[BaseTool] = [calculate, summary_statistics, convert_units]
for _tool in TOOLS:  # every tool here only reads: code (the selector) may open them
    _tool.metadata = {**(_tool.metadata or {}), "risk": "read"}
for _tool in TOOLS:
    _tool.handle_tool_error = True
