"""Weather scope: current conditions and daily forecasts from the public Open-Meteo API."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx
from langchain_core.tools import BaseTool, ToolException, tool

DESCRIPTION = "current weather and daily forecasts for any city (Open-Meteo)"

GEOCODING_URL_ENV = "ATTENTION_SCOPING_GEOCODING_URL"
WEATHER_URL_ENV = "ATTENTION_SCOPING_WEATHER_URL"
TIMEOUT_ENV = "ATTENTION_SCOPING_WEATHER_TIMEOUT"
DEFAULT_GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
DEFAULT_WEATHER_URL = "https://api.open-meteo.com/v1/forecast"
DEFAULT_TIMEOUT = 10.0
MAX_FORECAST_DAYS = 16
USER_AGENT = "attention-scoping-example-agent"

CURRENT_FIELDS = (
    "temperature_2m",
    "apparent_temperature",
    "relative_humidity_2m",
    "precipitation",
    "weather_code",
    "wind_speed_10m",
    "wind_direction_10m",
    "wind_gusts_10m",
    "is_day",
)
DAILY_FIELDS = (
    "weather_code",
    "temperature_2m_max",
    "temperature_2m_min",
    "precipitation_sum",
    "precipitation_probability_max",
    "wind_speed_10m_max",
)

# WMO weather interpretation codes as used by Open-Meteo.
WMO_CODES: dict[int, str] = {
    0: "Clear sky",
    1: "Mainly clear",
    2: "Partly cloudy",
    3: "Overcast",
    45: "Fog",
    48: "Depositing rime fog",
    51: "Light drizzle",
    53: "Moderate drizzle",
    55: "Dense drizzle",
    56: "Light freezing drizzle",
    57: "Dense freezing drizzle",
    61: "Slight rain",
    63: "Moderate rain",
    65: "Heavy rain",
    66: "Light freezing rain",
    67: "Heavy freezing rain",
    71: "Slight snowfall",
    73: "Moderate snowfall",
    75: "Heavy snowfall",
    77: "Snow grains",
    80: "Slight rain showers",
    81: "Moderate rain showers",
    82: "Violent rain showers",
    85: "Slight snow showers",
    86: "Heavy snow showers",
    95: "Thunderstorm",
    96: "Thunderstorm with slight hail",
    99: "Thunderstorm with heavy hail",
}

_COMPASS = (
    *("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE"),
    *("S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"),
)
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class WeatherError(ToolException):
    """The weather service could not answer; the message says why in plain words."""


def _default_client(timeout: float) -> httpx.Client:
    return httpx.Client(timeout=timeout, headers={"User-Agent": USER_AGENT})


client_factory: Callable[[float], httpx.Client] = _default_client
"""Builds the HTTP client for each request from a timeout in seconds. Replace it to inject a
fake transport, e.g. ``lambda timeout: httpx.Client(transport=httpx.MockTransport(handler))``."""


# --------------------------------------------------------------------------- HTTP


def _timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value <= 300:
        msg = f"{TIMEOUT_ENV} must be a number of seconds between 0 and 300, got {raw!r}"
        raise WeatherError(msg)
    return value


def _api_reason(response: httpx.Response) -> str:
    """Open-Meteo explains errors as {"error": true, "reason": "..."}; return the reason."""
    try:
        payload = response.json()
    except ValueError:
        return ""
    return str(payload.get("reason", "")) if isinstance(payload, dict) else ""


def _get_json(url: str, params: Mapping[str, str | int | float]) -> dict[str, Any]:
    """GET url and return its JSON object, turning every failure into a clear WeatherError."""
    timeout = _timeout()
    try:
        host = httpx.URL(url).host
    except httpx.InvalidURL as exc:
        msg = f"invalid weather service URL {url!r}: {exc}"
        raise WeatherError(msg) from exc
    if not host:
        msg = f"invalid weather service URL {url!r}: no host"
        raise WeatherError(msg)
    try:
        with client_factory(timeout) as client:
            response = client.get(url, params=dict(params))
    except httpx.TimeoutException as exc:
        msg = f"weather service timed out after {timeout:g} s ({host}); try again later"
        raise WeatherError(msg) from exc
    except httpx.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        msg = f"weather service unreachable ({host}): {reason}; the network may be offline"
        raise WeatherError(msg) from exc
    except httpx.HTTPError as exc:
        msg = f"weather service request failed ({host}): {exc}"
        raise WeatherError(msg) from exc
    if response.status_code >= 400:
        reason = _api_reason(response)
        detail = f": {reason}" if reason else ""
        msg = (
            f"weather service error ({host}): HTTP {response.status_code} "
            f"{response.reason_phrase}{detail}"
        )
        raise WeatherError(msg)
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        msg = f"weather service returned an invalid response ({host}): not a JSON object"
        raise WeatherError(msg)
    return payload


# --------------------------------------------------------------------------- places


@dataclass(frozen=True)
class Place:
    """A geocoded place."""

    name: str
    country: str
    admin1: str
    latitude: float
    longitude: float
    timezone: str

    @property
    def label(self) -> str:
        parts = [self.name, self.admin1, self.country]
        return ", ".join(dict.fromkeys(part for part in parts if part))

    @property
    def coordinates(self) -> str:
        lat = f"{abs(self.latitude):.2f}°{'N' if self.latitude >= 0 else 'S'}"
        lon = f"{abs(self.longitude):.2f}°{'E' if self.longitude >= 0 else 'W'}"
        return f"{lat}, {lon}"


def _parse_place(result: Mapping[str, Any]) -> Place:
    try:
        return Place(
            name=str(result["name"]),
            country=str(result.get("country") or result.get("country_code") or ""),
            admin1=str(result.get("admin1") or ""),
            latitude=float(result["latitude"]),
            longitude=float(result["longitude"]),
            timezone=str(result.get("timezone") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        msg = f"geocoding service returned an unexpected result: {exc!r}"
        raise WeatherError(msg) from exc


US_STATES: dict[str, str] = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa",
    "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland",
    "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi",
    "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire",
    "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York", "NC": "North Carolina",
    "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee",
    "TX": "Texas", "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington",
    "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming", "DC": "District of Columbia",
}  # fmt: skip
"""US state codes: "Portland, OR" names the state Open-Meteo calls "Oregon"."""

COUNTRY_ALIASES: dict[str, str] = {
    "uk": "GB", "u.k.": "GB", "britain": "GB", "great britain": "GB",
    "usa": "US", "u.s.": "US", "u.s.a.": "US", "america": "US",
    "united states of america": "US", "the netherlands": "NL", "holland": "NL",
    "czechia": "CZ", "south korea": "KR", "korea": "KR", "uae": "AE",
}  # fmt: skip
"""Country names people write that are not Open-Meteo's own ("UK": it says "United Kingdom")."""


def _qualifiers(qualifier: str) -> set[str]:
    """The casefolded names a qualifier may stand for: itself, a country's code, a state."""
    names = {qualifier.casefold()}
    code = COUNTRY_ALIASES.get(qualifier.casefold())
    if code:
        names.add(code.casefold())
    state = US_STATES.get(qualifier.upper())
    if state:
        names.add(state.casefold())
    return names


def _matches(result: Mapping[str, Any], qualifier: str) -> bool:
    fields = ("country", "country_code", "admin1", "admin2")
    wanted = _qualifiers(qualifier)
    return any(str(result.get(key) or "").casefold() in wanted for key in fields)


def find_place(city: str) -> Place:
    """Geocode 'City' or 'City, Region or Country' with the Open-Meteo geocoding API (a US
    state's code and common country names such as "UK" or "USA" are understood too)."""
    name, _, qualifier = (part.strip() for part in city.partition(","))
    if len(name) < 2:
        msg = f"city name {city!r} is too short; give a name such as 'Paris' or 'Paris, France'"
        raise WeatherError(msg)
    url = os.environ.get(GEOCODING_URL_ENV) or DEFAULT_GEOCODING_URL
    params = {"name": name, "count": 10 if qualifier else 1, "language": "en", "format": "json"}
    results = _get_json(url, params).get("results") or []
    if not results:
        msg = f"no place named {name!r} found; check the spelling or add the country"
        raise WeatherError(msg)
    if qualifier:
        matching = [result for result in results if _matches(result, qualifier)]
        if not matching:
            others = ", ".join(
                dict.fromkeys(f"{r.get('name')} ({r.get('country', '?')})" for r in results[:5])
            )
            msg = f"no place named {name!r} in {qualifier!r} found; other matches: {others}"
            raise WeatherError(msg)
        results = matching
    return _parse_place(results[0])


# --------------------------------------------------------------------------- weather


def describe_code(code: Any) -> str:
    """Name a WMO weather code, e.g. 61 -> 'Slight rain'."""
    try:
        return WMO_CODES.get(int(code), f"weather code {code}")
    except (TypeError, ValueError):
        return "unknown conditions"


def compass(degrees: float) -> str:
    """16-point compass direction the wind comes from, e.g. 225 -> 'SW'."""
    return _COMPASS[round(degrees / 22.5) % 16]


def _section(payload: Mapping[str, Any], key: str) -> dict[str, Any]:
    section = payload.get(key)
    if not isinstance(section, dict):
        msg = f"weather service returned an unexpected response (no {key!r} data)"
        raise WeatherError(msg)
    return section


def _fmt(value: Any, unit: str) -> str:
    return f"{value:g} {unit}" if isinstance(value, int | float) else "n/a"


def format_current(place: Place, payload: Mapping[str, Any]) -> str:
    """Render an Open-Meteo 'current' response as a few labelled lines."""
    current = _section(payload, "current")
    units = payload.get("current_units") or {}
    temp_unit = units.get("temperature_2m", "°C")
    wind_unit = units.get("wind_speed_10m", "km/h")
    timezone = payload.get("timezone") or place.timezone
    abbreviation = payload.get("timezone_abbreviation")
    zone = f"{timezone}, {abbreviation}" if abbreviation and abbreviation != timezone else timezone
    conditions = describe_code(current.get("weather_code"))
    if current.get("is_day") == 0:
        conditions += " (night)"
    lines = [
        f"{place.label} ({place.coordinates})",
        f"local time: {str(current.get('time', '?')).replace('T', ' ')} ({zone})",
        f"conditions: {conditions}",
        f"temperature: {_fmt(current.get('temperature_2m'), temp_unit)}"
        f" (feels like {_fmt(current.get('apparent_temperature'), temp_unit)})",
    ]
    humidity = current.get("relative_humidity_2m")
    if humidity is not None:
        lines.append(f"humidity: {_fmt(humidity, units.get('relative_humidity_2m', '%'))}")
    wind = f"wind: {_fmt(current.get('wind_speed_10m'), wind_unit)}"
    direction = current.get("wind_direction_10m")
    if isinstance(direction, int | float):
        wind += f" from {compass(direction)}"
    gusts = current.get("wind_gusts_10m")
    if gusts is not None:
        wind += f", gusts {_fmt(gusts, units.get('wind_gusts_10m', wind_unit))}"
    lines.append(wind)
    precipitation = current.get("precipitation")
    if precipitation is not None:
        lines.append(f"precipitation: {_fmt(precipitation, units.get('precipitation', 'mm'))}")
    return "\n".join(lines)


def format_forecast(place: Place, payload: Mapping[str, Any]) -> str:
    """Render an Open-Meteo 'daily' response as one line per day."""
    daily = _section(payload, "daily")
    units = payload.get("daily_units") or {}
    days = daily.get("time") or []
    if not isinstance(days, list) or not days:
        msg = "weather service returned an unexpected response (no forecast days)"
        raise WeatherError(msg)

    def column(name: str) -> list[Any]:
        values = daily.get(name)
        if isinstance(values, list) and len(values) == len(days):
            return values
        return [None] * len(days)

    codes, rain = column("weather_code"), column("precipitation_sum")
    highs, lows = column("temperature_2m_max"), column("temperature_2m_min")
    chance, wind = column("precipitation_probability_max"), column("wind_speed_10m_max")
    temp_unit = units.get("temperature_2m_max", "°C")
    rain_unit = units.get("precipitation_sum", "mm")
    wind_unit = units.get("wind_speed_10m_max", "km/h")
    timezone = payload.get("timezone") or place.timezone
    lines = [f"{place.label} ({place.coordinates}): {len(days)}-day forecast ({timezone})"]
    for i, day in enumerate(days):
        try:
            weekday = f" {_WEEKDAYS[date.fromisoformat(day).weekday()]}"
        except (TypeError, ValueError):
            weekday = ""
        low = f"{lows[i]:g}" if isinstance(lows[i], int | float) else "n/a"
        parts = [
            f"{day}{weekday}: {describe_code(codes[i])}",
            f"{low} to {_fmt(highs[i], temp_unit)}",
        ]
        if rain[i] is not None:
            odds = f" ({chance[i]:g} % chance)" if isinstance(chance[i], int | float) else ""
            parts.append(f"precipitation {_fmt(rain[i], rain_unit)}{odds}")
        if wind[i] is not None:
            parts.append(f"wind up to {_fmt(wind[i], wind_unit)}")
        lines.append(", ".join(parts))
    return "\n".join(lines)


def _weather_url() -> str:
    return os.environ.get(WEATHER_URL_ENV) or DEFAULT_WEATHER_URL


def current_weather(city: str) -> str:
    """Geocode city and fetch its current conditions."""
    place = find_place(city)
    params: dict[str, str | int | float] = {
        "latitude": round(place.latitude, 4),
        "longitude": round(place.longitude, 4),
        "current": ",".join(CURRENT_FIELDS),
        "timezone": "auto",
    }
    return format_current(place, _get_json(_weather_url(), params))


def forecast(city: str, days: int = 3) -> str:
    """Geocode city and fetch a daily forecast for 1-16 days."""
    if not 1 <= days <= MAX_FORECAST_DAYS:
        msg = f"days must be between 1 and {MAX_FORECAST_DAYS}, got {days}"
        raise WeatherError(msg)
    place = find_place(city)
    params: dict[str, str | int | float] = {
        "latitude": round(place.latitude, 4),
        "longitude": round(place.longitude, 4),
        "daily": ",".join(DAILY_FIELDS),
        "forecast_days": days,
        "timezone": "auto",
    }
    return format_forecast(place, _get_json(_weather_url(), params))


# --------------------------------------------------------------------------- tools


@tool(parse_docstring=True)
def get_current_weather(city: str) -> str:
    """Get the current weather for a city: conditions, temperature in °C, humidity and wind.

    Data comes live from Open-Meteo; report it as given, with the place and local time.

    Args:
        city: City name, optionally with region or country to disambiguate, e.g. "Paris" or
            "Portland, Oregon".
    """
    return current_weather(city)


@tool(parse_docstring=True)
def get_forecast(city: str, days: int = 3) -> str:
    """Get a daily forecast for a city: conditions, min/max °C, precipitation and wind per day.

    Args:
        city: City name, optionally with region or country, e.g. "Lyon, France".
        days: Number of days from today, 1 to 16.
    """
    return forecast(city, days)


TOOLS: list[BaseTool] = [get_current_weather, get_forecast]
for _tool in TOOLS:  # every tool here only reads: code (the selector) may open them
    _tool.metadata = {**(_tool.metadata or {}), "risk": "read"}
for _tool in TOOLS:
    _tool.handle_tool_error = True
