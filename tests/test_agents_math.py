"""Tests of the math scope: the safe evaluator, statistics, unit conversion and tool errors."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import ToolMessage

from agents import math as math_scope
from agents.math import CalculationError, convert, evaluate, summarize
from tests.agents_support import assert_scope_exports, call_tool


def _call(tool_name: str, args: dict[str, object]) -> ToolMessage:
    return call_tool(math_scope.TOOLS, tool_name, args)


def test_exports() -> None:
    assert_scope_exports(math_scope, ["calculate", "summary_statistics", "convert_units"])


# --------------------------------------------------------------------------- evaluator


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 2", 4),
        ("47 * 83", 3901),
        ("2 * (3 + 4) ** 2", 98),
        ("-2 ** 2", -4),
        ("(-2) ** 2", 4),
        ("+5 - -3", 8),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("-7 % 3", 2),
        ("2 ** -1", 0.5),
        ("2 ** 1000", 2**1000),
        ("sqrt(16)", 4.0),
        ("abs(-3.5)", 3.5),
        ("round(3.14159, 2)", 3.14),
        ("round(2.5)", 2),
        ("floor(-2.5)", -3),
        ("ceil(2.1)", 3),
        ("log(e)", 1.0),
        ("log(8, 2)", 3.0),
        ("log10(1000)", 3.0),
        ("exp(0)", 1.0),
        ("factorial(5)", 120),
        ("factorial(5.0)", 120),
        ("gcd(12, 18)", 6),
        ("lcm(4, 6)", 12),
        ("comb(5, 2)", 10),
        ("max(1, 7, 3)", 7),
        ("hypot(3, 4)", 5.0),
        ("pi", math.pi),
        ("2 * tau", 2 * math.tau),
        ("1_000_000 / 4", 250000.0),
        ("3 × 4 ÷ 2", 6.0),
        ("10 − 4", 6),
        ("1 + 1 =", 2),
    ],
)
def test_evaluate(expression: str, expected: float) -> None:
    result = evaluate(expression)
    assert result == pytest.approx(expected)
    assert type(result) is type(expected)


def test_trigonometry_uses_radians() -> None:
    assert evaluate("sin(pi / 2)") == pytest.approx(1.0)
    assert evaluate("cos(radians(60))") == pytest.approx(0.5)
    assert evaluate("degrees(atan2(1, 1))") == pytest.approx(45.0)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", "unknown function '__import__'"),
        ("__import__('os').system('true')", "attribute access is not allowed"),
        ("().__class__.__bases__", "attribute access is not allowed"),
        ("open('/etc/passwd')", "unknown function 'open'"),
        ("(lambda: 1)()", "lambda is not allowed"),
        ("x + 1", "unknown name 'x'"),
        ("sqrt", "'sqrt' is a function"),
        ("10 ** 10 ** 10", "exponent 10000000000 is too large"),
        ("9 ** 9 ** 9", "exponent 387420489 is too large"),
        ("2 ** 100000", "exponent 100000 is too large"),
        ("9 ** 400", "result is too large"),
        ("2.0 ** 1024", "result is too large"),
        ("10 ** 308 * 10", "result is too large"),
        ("1e308 * 10", "result is too large"),
        ("9" * 400, "result is too large"),
        ("exp(1000)", "result is too large"),
        ("factorial(171)", "factorial() needs a whole number from 0 to 170"),
        ("factorial(-1)", "factorial() needs a whole number"),
        ("factorial(2.5)", "factorial() needs whole numbers"),
        ("comb(100000, 3)", "comb() needs 0 <= n <= 1000"),
        ("round(1, 10 ** 6)", "round() digits must be between"),
        ("1 / 0", "division by zero"),
        ("5 // 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("sqrt(-1)", "sqrt(-1) is undefined"),
        ("log(0)", "log(0) is undefined"),
        ("(-8) ** (1 / 3)", "not a real number"),
        ("2 ^ 3", "use ** for powers"),
        ("5 & 3", "bitwise"),
        ("1,000", "a tuple"),
        ("'abc'", "only numbers are allowed"),
        ("True + 1", "only numbers are allowed"),
        ("1j", "complex numbers are not supported"),
        ("1 < 2", "comparison is not allowed"),
        ("[1, 2][0]", "indexing is not allowed"),
        ("[1, 2]", "a list is not allowed"),
        ("1 if 1 else 2", "conditional expression is not allowed"),
        ("(y := 2)", "assignment is not allowed"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument(s), got 2"),
        ("sqrt(x=4)", "takes no keyword arguments"),
        ("max()", "max() takes at least 1 argument(s), got 0"),
        ("2 +", "invalid syntax"),
        ("", "empty expression"),
        ("1 + " * 200 + "1", "expression is too long"),
    ],
)
def test_evaluate_rejects(expression: str, message: str) -> None:
    with pytest.raises(CalculationError) as caught:
        evaluate(expression)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("10 ** 10 ** 10", "exponent 10000000000 is too large (the limit is 10000)"),
        ("9 ** 9 ** 9", "exponent 387420489 is too large (the limit is 10000)"),
        ("factorial(10 ** 6)", "factorial() needs a whole number from 0 to 170, got 1000000"),
        ("comb(10**9, 10**8)", "comb() needs 0 <= n <= 1000 and k >= 0"),
    ],
)
def test_abusive_expressions_are_refused_before_computing(expression: str, message: str) -> None:
    """The limits are checked on the operands, so the huge result is never computed (timings:
    `python benchmarks/tools_fail_fast.py`)."""
    with pytest.raises(CalculationError) as caught:
        evaluate(expression)
    assert str(caught.value) == message


def test_deep_nesting_is_rejected_cleanly() -> None:
    assert evaluate("(" * 150 + "1" + ")" * 150) == 1
    with pytest.raises(CalculationError, match="invalid syntax: too many nested parentheses"):
        evaluate("(" * 240 + "1" + ")" * 240)
    assert evaluate("-" * 300 + "1") == 1


def test_calculate_tool_returns_the_bare_result() -> None:
    assert math_scope.calculate.invoke({"expression": "47 * 83"}) == "3901"
    assert math_scope.calculate.invoke({"expression": "0.1 + 0.2"}) == "0.3"
    assert math_scope.calculate.invoke({"expression": "sqrt(16)"}) == "4"
    assert math_scope.calculate.invoke({"expression": "1 / 3"}) == "0.333333333333333"
    assert math_scope.calculate.invoke({"expression": "2 ** 64"}) == "18446744073709551616"


def test_calculate_error_becomes_error_tool_message() -> None:
    message = _call("calculate", {"expression": "__import__('os')"})
    assert message.status == "error"
    assert "cannot evaluate" in message.content
    assert "unknown function '__import__'" in message.content
    assert str(_call("calculate", {"expression": "1/0"}).content).endswith("division by zero")


# --------------------------------------------------------------------------- statistics


def test_summarize() -> None:
    stats = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert stats["count"] == 8
    assert stats["sum"] == 40
    assert stats["mean"] == 5
    assert stats["median"] == 4.5
    assert stats["min"] == 2
    assert stats["max"] == 9
    assert stats["range"] == 7
    assert stats["pstdev"] == pytest.approx(2.0)
    assert stats["stdev"] == pytest.approx(2.138089935)


def test_summarize_single_value_has_no_sample_stdev() -> None:
    stats = summarize([3.5])
    assert stats["stdev"] is None
    assert stats["pstdev"] == 0
    assert stats["median"] == 3.5


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ([], "no numbers given"),
        ([1.0, math.inf], "finite"),
        ([1.0, math.nan], "finite"),
        ([1.0] * 10_001, "too many numbers"),
    ],
)
def test_summarize_rejects(numbers: list[float], message: str) -> None:
    with pytest.raises(CalculationError, match=message):
        summarize(numbers)


def test_summary_statistics_tool() -> None:
    text = math_scope.summary_statistics.invoke({"numbers": [1, 2, 3, 4]})
    assert text.splitlines() == [
        "count: 4",
        "sum: 10",
        "mean: 2.5",
        "median: 2.5",
        "min: 1",
        "max: 4",
        "range: 3",
        "sample stdev: 1.29099444873581",
        "population stdev: 1.11803398874989",
    ]
    one = math_scope.summary_statistics.invoke({"numbers": [7]})
    assert "sample stdev: n/a (needs 2+ values)" in one
    error = _call("summary_statistics", {"numbers": []})
    assert error.status == "error"
    assert error.content == "no numbers given"


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (1, "mi", "km", 1.609344),
        (5, "km", "m", 5000),
        (12, "in", "ft", 1),
        (1, "nautical mile", "m", 1852),
        (1, "lb", "kg", 0.45359237),
        (16, "oz", "lb", 1),
        (1, "t", "kg", 1000),
        (1, "gal", "l", 3.785411784),
        (1, "imperial gallon", "l", 4.54609),
        (2, "cups", "pint", 1),
        (3, "tsp", "tbsp", 1),
        (1, "acre", "m²", 4046.8564224),
        (1, "km2", "ha", 100),
        (100, "km/h", "mph", 62.13711922),
        (1, "knot", "km/h", 1.852),
        (10, "m/s", "km/h", 36),
        (2, "h", "min", 120),
        (1, "week", "days", 7),
        (100, "°C", "°F", 212),
        (32, "F", "C", 0),
        (-40, "celsius", "fahrenheit", -40),
        (0, "K", "C", -273.15),
        (20, "C", "K", 293.15),
    ],
)
def test_convert(value: float, source: str, target: str, expected: float) -> None:
    result, _, _ = convert(value, source, target)
    assert result == pytest.approx(expected)


def test_unit_names_are_normalised() -> None:
    result, source, target = convert(3, "Square  Feet", "M2")
    assert (source.symbol, target.symbol) == ("ft²", "m²")
    assert result == pytest.approx(0.27870912)


@pytest.mark.parametrize(
    ("value", "source", "target", "message"),
    [
        (1, "kg", "m", "cannot convert mass (kg) to length (m)"),
        (1, "°C", "km/h", "cannot convert temperature (°C) to speed (km/h)"),
        (1, "metres", "fet", "unknown unit 'fet'; did you mean"),
        (1, "furlong", "m", "unknown unit 'furlong'; supported units: m, km"),
        (-500, "C", "K", "below absolute zero"),
        (-1, "K", "C", "below absolute zero"),
        (float("inf"), "m", "km", "finite"),
    ],
)
def test_convert_rejects(value: float, source: str, target: str, message: str) -> None:
    with pytest.raises(CalculationError) as caught:
        convert(value, source, target)
    assert message in str(caught.value)


def test_convert_units_tool() -> None:
    text = math_scope.convert_units.invoke({"value": 100, "from_unit": "km/h", "to_unit": "mph"})
    assert text == "100 km/h = 62.13711922 mph"
    text = math_scope.convert_units.invoke({"value": 100, "from_unit": "C", "to_unit": "F"})
    assert text == "100 °C = 212 °F"
    error = _call("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "m"})
    assert error.status == "error"
    assert error.content == "cannot convert mass (kg) to length (m)"
