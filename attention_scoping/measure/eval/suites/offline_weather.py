"""An offline stand-in for the Open-Meteo API, so the weather scope runs without a network.

Every city geocodes (coordinates derived from its name) and gets deterministic readings derived
from its name, so a task can check that the tool ran for the right city. Installed through the
weather module's documented `client_factory` hook for the duration of a run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from typing import Any

import httpx


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.casefold().encode()).digest()[:4], "big")


def _place(name: str) -> dict[str, Any]:
    seed = _seed(name)
    return {
        "name": name.strip().title(),
        "country": "Testland",
        "country_code": "TL",
        "latitude": round((seed % 12000) / 100 - 60, 4),
        "longitude": round((seed // 12000 % 36000) / 100 - 180, 4),
        "timezone": "UTC",
    }


def _current(seed: int) -> dict[str, Any]:
    return {
        "time": "2026-06-01T12:00",
        "temperature_2m": 5 + seed % 25,
        "apparent_temperature": 4 + seed % 25,
        "relative_humidity_2m": 30 + seed % 60,
        "precipitation": 0,
        "weather_code": (0, 1, 2, 3, 61)[seed % 5],
        "wind_speed_10m": 3 + seed % 30,
        "wind_direction_10m": seed % 360,
        "wind_gusts_10m": 10 + seed % 40,
        "is_day": 1,
    }


def _daily(seed: int, days: int) -> dict[str, Any]:
    start = date(2026, 6, 1)
    return {
        "time": [(start + timedelta(days=i)).isoformat() for i in range(days)],
        "weather_code": [(0, 2, 3, 61, 63)[(seed + i) % 5] for i in range(days)],
        "temperature_2m_max": [15 + (seed + 3 * i) % 15 for i in range(days)],
        "temperature_2m_min": [5 + (seed + 2 * i) % 8 for i in range(days)],
        "precipitation_sum": [float((seed + i) % 7) for i in range(days)],
        "precipitation_probability_max": [(seed + 11 * i) % 100 for i in range(days)],
        "wind_speed_10m_max": [10 + (seed + i) % 25 for i in range(days)],
    }


def handle(request: httpx.Request) -> httpx.Response:
    """Answer a geocoding or forecast request as Open-Meteo would."""
    params = request.url.params
    if "name" in params:
        return httpx.Response(200, json={"results": [_place(params["name"])]})
    seed = _seed(f"{params.get('latitude')},{params.get('longitude')}")
    body: dict[str, Any] = {"timezone": "UTC", "timezone_abbreviation": "UTC"}
    if "current" in params:
        body["current"] = _current(seed)
    if "daily" in params:
        body["daily"] = _daily(seed, int(params.get("forecast_days", "3")))
    return httpx.Response(200, json=body)


@contextmanager
def offline_weather() -> Iterator[None]:
    """Route the weather tools to `handle` while the block runs."""
    from agents import weather

    previous = weather.client_factory
    weather.client_factory = lambda timeout: httpx.Client(
        transport=httpx.MockTransport(handle), timeout=timeout
    )
    try:
        yield
    finally:
        weather.client_factory = previous
