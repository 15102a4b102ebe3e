"""Tests of the weather scope against faked Open-Meteo HTTP responses (never the network)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import ToolMessage

from agents import weather
from tests.agents_support import assert_scope_exports, call_tool, tool_error

GEOCODING_HOST = "geocoding-api.open-meteo.com"
FORECAST_HOST = "api.open-meteo.com"

PARIS_GEOCODING: dict[str, Any] = {
    "results": [
        {
            "id": 2988507,
            "name": "Paris",
            "latitude": 48.85341,
            "longitude": 2.3488,
            "elevation": 42.0,
            "feature_code": "PPLC",
            "country_code": "FR",
            "admin1_id": 3012874,
            "admin2_id": 2968815,
            "timezone": "Europe/Paris",
            "population": 2138551,
            "country_id": 3017382,
            "country": "France",
            "admin1": "Île-de-France",
            "admin2": "Paris",
        }
    ],
    "generationtime_ms": 0.7319498,
}

PARIS_CANDIDATES: dict[str, Any] = {
    "results": [
        PARIS_GEOCODING["results"][0],
        {
            "id": 4717560,
            "name": "Paris",
            "latitude": 33.66094,
            "longitude": -95.55551,
            "elevation": 183.0,
            "feature_code": "PPLA2",
            "country_code": "US",
            "timezone": "America/Chicago",
            "population": 24782,
            "country": "United States",
            "admin1": "Texas",
            "admin2": "Lamar",
        },
        {
            "id": 4647963,
            "name": "Paris",
            "latitude": 36.302,
            "longitude": -88.32671,
            "elevation": 158.0,
            "feature_code": "PPLA2",
            "country_code": "US",
            "timezone": "America/Chicago",
            "population": 10156,
            "country": "United States",
            "admin1": "Tennessee",
            "admin2": "Henry",
        },
    ],
    "generationtime_ms": 1.12,
}

NOT_FOUND: dict[str, Any] = {"generationtime_ms": 0.41}

CURRENT: dict[str, Any] = {
    "latitude": 48.86,
    "longitude": 2.3399997,
    "generationtime_ms": 0.0629425048828125,
    "utc_offset_seconds": 3600,
    "timezone": "Europe/Paris",
    "timezone_abbreviation": "GMT+1",
    "elevation": 43.0,
    "current_units": {
        "time": "iso8601",
        "interval": "seconds",
        "temperature_2m": "°C",
        "apparent_temperature": "°C",
        "relative_humidity_2m": "%",
        "precipitation": "mm",
        "weather_code": "wmo code",
        "wind_speed_10m": "km/h",
        "wind_direction_10m": "°",
        "wind_gusts_10m": "km/h",
        "is_day": "",
    },
    "current": {
        "time": "2025-01-15T14:15",
        "interval": 900,
        "temperature_2m": 6.3,
        "apparent_temperature": 3.1,
        "relative_humidity_2m": 81,
        "precipitation": 0.2,
        "weather_code": 61,
        "wind_speed_10m": 14.8,
        "wind_direction_10m": 230,
        "wind_gusts_10m": 31.0,
        "is_day": 1,
    },
}

DAILY: dict[str, Any] = {
    "latitude": 48.86,
    "longitude": 2.3399997,
    "generationtime_ms": 0.11,
    "utc_offset_seconds": 3600,
    "timezone": "Europe/Paris",
    "timezone_abbreviation": "GMT+1",
    "elevation": 43.0,
    "daily_units": {
        "time": "iso8601",
        "weather_code": "wmo code",
        "temperature_2m_max": "°C",
        "temperature_2m_min": "°C",
        "precipitation_sum": "mm",
        "precipitation_probability_max": "%",
        "wind_speed_10m_max": "km/h",
    },
    "daily": {
        "time": ["2025-01-15", "2025-01-16", "2025-01-17"],
        "weather_code": [61, 3, 0],
        "temperature_2m_max": [7.9, 6.4, 4.2],
        "temperature_2m_min": [3.1, 1.8, -2.5],
        "precipitation_sum": [2.3, 0.0, 0.0],
        "precipitation_probability_max": [80, 15, 0],
        "wind_speed_10m_max": [22.3, 14.0, 9.7],
    },
}

Responder = Callable[[httpx.Request], httpx.Response]


class FakeOpenMeteo:
    """Serves canned responses per host and records every request and client timeout."""

    def __init__(self) -> None:
        self.routes: dict[str, Responder] = {}
        self.requests: list[httpx.Request] = []
        self.timeouts: list[float] = []

    def json(self, host: str, payload: dict[str, Any], status: int = 200) -> None:
        self.routes[host] = lambda request: httpx.Response(status, json=payload)

    def fail(self, host: str, error: type[httpx.RequestError], text: str) -> None:
        def raise_error(request: httpx.Request) -> httpx.Response:
            raise error(text, request=request)

        self.routes[host] = raise_error

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        responder = self.routes.get(request.url.host)
        if responder is None:
            return httpx.Response(404, json={"error": True, "reason": "no route in fake"})
        return responder(request)

    def client(self, timeout: float) -> httpx.Client:
        self.timeouts.append(timeout)
        return httpx.Client(transport=httpx.MockTransport(self.handle), timeout=timeout)

    def params(self, index: int) -> dict[str, str]:
        return dict(self.requests[index].url.params)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (weather.GEOCODING_URL_ENV, weather.WEATHER_URL_ENV, weather.TIMEOUT_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenMeteo]:
    fake = FakeOpenMeteo()
    monkeypatch.setattr(weather, "client_factory", fake.client)
    yield fake


def _call(tool_name: str, args: dict[str, object]) -> ToolMessage:
    return call_tool(weather.TOOLS, tool_name, args)


def _error(tool_name: str, args: dict[str, object]) -> str:
    return tool_error(weather.TOOLS, tool_name, args)


def test_exports() -> None:
    assert_scope_exports(weather, ["get_current_weather", "get_forecast"])


# --------------------------------------------------------------------------- success


def test_current_weather(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, CURRENT)
    text = weather.get_current_weather.invoke({"city": "Paris"})
    assert text.splitlines() == [
        "Paris, Île-de-France, France (48.85°N, 2.35°E)",
        "local time: 2025-01-15 14:15 (Europe/Paris, GMT+1)",
        "conditions: Slight rain",
        "temperature: 6.3 °C (feels like 3.1 °C)",
        "humidity: 81 %",
        "wind: 14.8 km/h from SW, gusts 31 km/h",
        "precipitation: 0.2 mm",
    ]
    assert [r.url.host for r in api.requests] == [GEOCODING_HOST, FORECAST_HOST]
    assert api.requests[0].url.path == "/v1/search"
    assert api.params(0) == {"name": "Paris", "count": "1", "language": "en", "format": "json"}
    assert api.requests[1].url.path == "/v1/forecast"
    sent = api.params(1)
    assert sent["latitude"] == "48.8534"
    assert sent["longitude"] == "2.3488"
    assert sent["timezone"] == "auto"
    assert sent["current"].split(",") == list(weather.CURRENT_FIELDS)
    assert "daily" not in sent
    assert api.timeouts == [10.0, 10.0]


def test_default_client_sets_timeout_and_user_agent() -> None:
    with weather.client_factory(3.0) as client:
        assert client.timeout.read == 3.0
        assert client.timeout.connect == 3.0
        assert client.headers["user-agent"] == weather.USER_AGENT


def test_current_weather_at_night(api: FakeOpenMeteo) -> None:
    night = {**CURRENT, "current": {**CURRENT["current"], "weather_code": 0, "is_day": 0}}
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, night)
    assert "conditions: Clear sky (night)" in weather.get_current_weather.invoke({"city": "Paris"})


def test_forecast(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, DAILY)
    text = weather.get_forecast.invoke({"city": "Paris", "days": 3})
    assert text.splitlines() == [
        "Paris, Île-de-France, France (48.85°N, 2.35°E): 3-day forecast (Europe/Paris)",
        "2025-01-15 Wed: Slight rain, 3.1 to 7.9 °C, precipitation 2.3 mm (80 % chance), "
        "wind up to 22.3 km/h",
        "2025-01-16 Thu: Overcast, 1.8 to 6.4 °C, precipitation 0 mm (15 % chance), "
        "wind up to 14 km/h",
        "2025-01-17 Fri: Clear sky, -2.5 to 4.2 °C, precipitation 0 mm (0 % chance), "
        "wind up to 9.7 km/h",
    ]
    sent = api.params(1)
    assert sent["forecast_days"] == "3"
    assert sent["daily"].split(",") == list(weather.DAILY_FIELDS)
    assert sent["timezone"] == "auto"
    assert "current" not in sent


def test_forecast_default_is_three_days(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, DAILY)
    weather.get_forecast.invoke({"city": "Paris"})
    assert api.params(1)["forecast_days"] == "3"


def test_forecast_tolerates_missing_columns(api: FakeOpenMeteo) -> None:
    sparse = {
        "timezone": "Europe/Paris",
        "daily": {"time": ["2025-01-15"], "weather_code": [45], "temperature_2m_max": [5.0]},
    }
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, sparse)
    text = weather.get_forecast.invoke({"city": "Paris", "days": 1})
    assert text.splitlines()[1] == "2025-01-15 Wed: Fog, n/a to 5 °C"


def test_city_with_country_picks_the_matching_place(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_CANDIDATES)
    api.json(FORECAST_HOST, CURRENT)
    text = weather.get_current_weather.invoke({"city": "Paris, Texas"})
    assert text.startswith("Paris, Texas, United States (33.66°N, 95.56°W)")
    assert api.params(0)["name"] == "Paris"
    assert api.params(0)["count"] == "10"
    assert api.params(1)["latitude"] == "33.6609"
    assert api.params(1)["longitude"] == "-95.5555"
    weather.get_current_weather.invoke({"city": "Paris, us"})
    assert api.params(3)["latitude"] == "33.6609"


@pytest.mark.parametrize("city", ["Paris, TX", "Paris, USA", "Paris, U.S.", "Paris, tx"])
def test_state_codes_and_common_country_names_qualify_a_city(api: FakeOpenMeteo, city: str) -> None:
    api.json(GEOCODING_HOST, PARIS_CANDIDATES)
    api.json(FORECAST_HOST, CURRENT)
    text = weather.get_current_weather.invoke({"city": city})
    assert text.startswith("Paris, Texas, United States")


@pytest.mark.parametrize(
    ("code", "text"),
    [(0, "Clear sky"), (3, "Overcast"), (45, "Fog"), (65, "Heavy rain"), (75, "Heavy snowfall")],
)
def test_wmo_codes(code: int, text: str) -> None:
    assert weather.describe_code(code) == text


def test_wmo_code_edge_cases() -> None:
    assert weather.describe_code(99) == "Thunderstorm with heavy hail"
    assert weather.describe_code(42) == "weather code 42"
    assert weather.describe_code(None) == "unknown conditions"


@pytest.mark.parametrize(
    ("degrees", "point"), [(0, "N"), (22.5, "NNE"), (90, "E"), (225, "SW"), (350, "N"), (359, "N")]
)
def test_compass(degrees: float, point: str) -> None:
    assert weather.compass(degrees) == point


# --------------------------------------------------------------------------- failures


def test_city_not_found(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, NOT_FOUND)
    error = _error("get_current_weather", {"city": "Atlantis"})
    assert error == "no place named 'Atlantis' found; check the spelling or add the country"
    assert len(api.requests) == 1


def test_city_not_in_the_given_country(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_CANDIDATES)
    error = _error("get_forecast", {"city": "Paris, Narnia"})
    assert error == (
        "no place named 'Paris' in 'Narnia' found; other matches: Paris (France), "
        "Paris (United States)"
    )


@pytest.mark.parametrize("city", ["", " ", "X", ", France"])
def test_city_too_short(api: FakeOpenMeteo, city: str) -> None:
    error = _error("get_current_weather", {"city": city})
    assert "too short" in error
    assert api.requests == []


@pytest.mark.parametrize("days", [0, -1, 17, 100])
def test_forecast_days_out_of_range(api: FakeOpenMeteo, days: int) -> None:
    error = _error("get_forecast", {"city": "Paris", "days": days})
    assert error == f"days must be between 1 and 16, got {days}"
    assert api.requests == []


def test_http_500(api: FakeOpenMeteo) -> None:
    api.routes[GEOCODING_HOST] = lambda request: httpx.Response(500, text="Internal error")
    error = _error("get_current_weather", {"city": "Paris"})
    assert error == (
        "weather service error (geocoding-api.open-meteo.com): HTTP 500 Internal Server Error"
    )


def test_http_400_includes_the_api_reason(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    reason = "Parameter 'current' has an invalid value"
    api.json(FORECAST_HOST, {"error": True, "reason": reason}, status=400)
    error = _error("get_current_weather", {"city": "Paris"})
    assert error == f"weather service error (api.open-meteo.com): HTTP 400 Bad Request: {reason}"


def test_timeout(api: FakeOpenMeteo) -> None:
    api.fail(GEOCODING_HOST, httpx.ReadTimeout, "The read operation timed out")
    error = _error("get_forecast", {"city": "Paris"})
    assert error == (
        "weather service timed out after 10 s (geocoding-api.open-meteo.com); try again later"
    )


def test_timeout_is_configurable(api: FakeOpenMeteo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(weather.TIMEOUT_ENV, "2.5")
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.fail(FORECAST_HOST, httpx.ConnectTimeout, "")
    message = _call("get_current_weather", {"city": "Paris"})
    assert api.timeouts == [2.5, 2.5]
    assert message.content == (
        "weather service timed out after 2.5 s (api.open-meteo.com); try again later"
    )


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1000"])
def test_invalid_timeout_setting(
    api: FakeOpenMeteo, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(weather.TIMEOUT_ENV, value)
    error = _error("get_current_weather", {"city": "Paris"})
    assert weather.TIMEOUT_ENV in error
    assert api.requests == []


def test_connection_error(api: FakeOpenMeteo) -> None:
    api.fail(GEOCODING_HOST, httpx.ConnectError, "[Errno -2] Name or service not known")
    error = _error("get_current_weather", {"city": "Paris"})
    assert error == (
        "weather service unreachable (geocoding-api.open-meteo.com): "
        "[Errno -2] Name or service not known; the network may be offline"
    )


def test_invalid_json(api: FakeOpenMeteo) -> None:
    api.routes[GEOCODING_HOST] = lambda request: httpx.Response(200, text="<html>oops</html>")
    error = _error("get_current_weather", {"city": "Paris"})
    assert "returned an invalid response (geocoding-api.open-meteo.com)" in error


def test_unexpected_payload(api: FakeOpenMeteo) -> None:
    api.json(GEOCODING_HOST, PARIS_GEOCODING)
    api.json(FORECAST_HOST, {"latitude": 48.86, "longitude": 2.34})
    error = _error("get_current_weather", {"city": "Paris"})
    assert error == "weather service returned an unexpected response (no 'current' data)"


def test_base_urls_are_read_from_the_environment_at_call_time(
    api: FakeOpenMeteo, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.json("geo.test", PARIS_GEOCODING)
    api.json("wx.test", CURRENT)
    monkeypatch.setenv(weather.GEOCODING_URL_ENV, "http://geo.test/custom/search")
    monkeypatch.setenv(weather.WEATHER_URL_ENV, "http://wx.test/custom/forecast")
    weather.get_current_weather.invoke({"city": "Paris"})
    assert [str(r.url.copy_with(query=None)) for r in api.requests] == [
        "http://geo.test/custom/search",
        "http://wx.test/custom/forecast",
    ]


def test_invalid_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(weather.GEOCODING_URL_ENV, "not a url")
    error = _error("get_current_weather", {"city": "Paris"})
    assert error.startswith("invalid weather service URL 'not a url'")


def test_real_client_fails_once_and_clearly_when_nothing_listens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The default httpx client against a closed loopback port (no internet involved): one
    attempt and a clear error (timings: `python benchmarks/tools_fail_fast.py`)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(weather.GEOCODING_URL_ENV, f"http://127.0.0.1:{port}/v1/search")
    built: list[float] = []

    def real_client(timeout: float) -> httpx.Client:
        built.append(timeout)
        return weather._default_client(timeout)

    monkeypatch.setattr(weather, "client_factory", real_client)
    message = _call("get_current_weather", {"city": "Paris"})
    assert built == [weather.DEFAULT_TIMEOUT]  # one attempt, bounded by the timeout, no retries
    assert message.status == "error"
    assert str(message.content).startswith("weather service unreachable (127.0.0.1): ")
    assert str(message.content).endswith("; the network may be offline")
