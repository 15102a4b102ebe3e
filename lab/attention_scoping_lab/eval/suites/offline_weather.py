"""An offline stand-in for the Open-Meteo API, so the weather scope runs without a network.

Every city geocodes (coordinates derived from its name) and gets deterministic readings derived
from its coordinates, so a task can check that the tool ran for the right city. The weather
tools invite "City" and "City, Region or Country" ("Portland, Oregon", "Lyon, France"), so the
fake answers both as Open-Meteo does: a well-known city comes with its real country and region
(`CITIES`), and a search for several candidates (what the tool makes when a qualifier is given)
also lists the name in every country of `COUNTRIES` and every US state, so a qualifier a model
adds finds its place. Installed through the weather module's documented `client_factory` hook
for the duration of a run.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from typing import Any

import httpx

CITIES: dict[str, tuple[str, str, str]] = {
    "lisbon": ("Portugal", "PT", "Lisbon"), "porto": ("Portugal", "PT", "Porto"),
    "madrid": ("Spain", "ES", "Madrid"), "barcelona": ("Spain", "ES", "Catalonia"),
    "seville": ("Spain", "ES", "Andalusia"), "paris": ("France", "FR", "Île-de-France"),
    "lyon": ("France", "FR", "Auvergne-Rhône-Alpes"), "marseille": ("France", "FR", "Provence"),
    "berlin": ("Germany", "DE", "Berlin"), "munich": ("Germany", "DE", "Bavaria"),
    "hamburg": ("Germany", "DE", "Hamburg"), "vienna": ("Austria", "AT", "Vienna"),
    "zurich": ("Switzerland", "CH", "Zurich"), "geneva": ("Switzerland", "CH", "Geneva"),
    "rome": ("Italy", "IT", "Lazio"), "milan": ("Italy", "IT", "Lombardy"),
    "florence": ("Italy", "IT", "Tuscany"), "naples": ("Italy", "IT", "Campania"),
    "dublin": ("Ireland", "IE", "Leinster"), "london": ("United Kingdom", "GB", "England"),
    "manchester": ("United Kingdom", "GB", "England"),
    "edinburgh": ("United Kingdom", "GB", "Scotland"),
    "amsterdam": ("Netherlands", "NL", "North Holland"),
    "brussels": ("Belgium", "BE", "Brussels Capital"), "oslo": ("Norway", "NO", "Oslo"),
    "bergen": ("Norway", "NO", "Vestland"), "stockholm": ("Sweden", "SE", "Stockholm"),
    "copenhagen": ("Denmark", "DK", "Capital Region"), "helsinki": ("Finland", "FI", "Uusimaa"),
    "reykjavik": ("Iceland", "IS", "Capital Region"), "prague": ("Czechia", "CZ", "Prague"),
    "warsaw": ("Poland", "PL", "Masovia"), "krakow": ("Poland", "PL", "Lesser Poland"),
    "budapest": ("Hungary", "HU", "Budapest"), "athens": ("Greece", "GR", "Attica"),
    "istanbul": ("Turkey", "TR", "Istanbul"), "kyiv": ("Ukraine", "UA", "Kyiv City"),
    "cairo": ("Egypt", "EG", "Cairo"), "nairobi": ("Kenya", "KE", "Nairobi Area"),
    "lagos": ("Nigeria", "NG", "Lagos"), "cape town": ("South Africa", "ZA", "Western Cape"),
    "marrakesh": ("Morocco", "MA", "Marrakesh-Safi"),
    "dubai": ("United Arab Emirates", "AE", "Dubai"),
    "mumbai": ("India", "IN", "Maharashtra"), "delhi": ("India", "IN", "Delhi"),
    "bangkok": ("Thailand", "TH", "Bangkok"), "singapore": ("Singapore", "SG", ""),
    "hanoi": ("Vietnam", "VN", "Hanoi"), "jakarta": ("Indonesia", "ID", "Jakarta"),
    "beijing": ("China", "CN", "Beijing"), "shanghai": ("China", "CN", "Shanghai"),
    "seoul": ("South Korea", "KR", "Seoul"), "tokyo": ("Japan", "JP", "Tokyo"),
    "kyoto": ("Japan", "JP", "Kyoto"), "osaka": ("Japan", "JP", "Osaka"),
    "sydney": ("Australia", "AU", "New South Wales"), "melbourne": ("Australia", "AU", "Victoria"),
    "auckland": ("New Zealand", "NZ", "Auckland"), "toronto": ("Canada", "CA", "Ontario"),
    "montreal": ("Canada", "CA", "Quebec"), "vancouver": ("Canada", "CA", "British Columbia"),
    "new york": ("United States", "US", "New York"),
    "boston": ("United States", "US", "Massachusetts"),
    "chicago": ("United States", "US", "Illinois"),
    "seattle": ("United States", "US", "Washington"),
    "portland": ("United States", "US", "Oregon"),
    "san francisco": ("United States", "US", "California"),
    "los angeles": ("United States", "US", "California"),
    "mexico city": ("Mexico", "MX", "Mexico City"), "havana": ("Cuba", "CU", "Havana"),
    "bogota": ("Colombia", "CO", "Bogota"), "lima": ("Peru", "PE", "Lima"),
    "santiago": ("Chile", "CL", "Santiago Metropolitan"),
    "buenos aires": ("Argentina", "AR", "Buenos Aires"), "sao paulo": ("Brazil", "BR", "São Paulo"),
    "rio de janeiro": ("Brazil", "BR", "Rio de Janeiro"),
}  # fmt: skip
"""Well-known cities: (country, country code, region), as Open-Meteo returns them first."""

COUNTRIES: tuple[tuple[str, str], ...] = (
    ("Argentina", "AR"), ("Australia", "AU"), ("Austria", "AT"), ("Belgium", "BE"),
    ("Brazil", "BR"), ("Canada", "CA"), ("Chile", "CL"), ("China", "CN"), ("Colombia", "CO"),
    ("Croatia", "HR"), ("Cuba", "CU"), ("Czechia", "CZ"), ("Denmark", "DK"), ("Egypt", "EG"),
    ("Estonia", "EE"), ("Ethiopia", "ET"), ("Finland", "FI"), ("France", "FR"),
    ("Germany", "DE"), ("Ghana", "GH"), ("Greece", "GR"), ("Hungary", "HU"), ("Iceland", "IS"),
    ("India", "IN"), ("Indonesia", "ID"), ("Iran", "IR"), ("Ireland", "IE"), ("Israel", "IL"),
    ("Italy", "IT"), ("Japan", "JP"), ("Kenya", "KE"), ("Latvia", "LV"), ("Lithuania", "LT"),
    ("Luxembourg", "LU"), ("Malaysia", "MY"), ("Mali", "ML"), ("Mexico", "MX"),
    ("Morocco", "MA"), ("Netherlands", "NL"), ("New Zealand", "NZ"), ("Nigeria", "NG"),
    ("Norway", "NO"), ("Pakistan", "PK"), ("Peru", "PE"), ("Philippines", "PH"),
    ("Poland", "PL"), ("Portugal", "PT"), ("Romania", "RO"), ("Russia", "RU"),
    ("Saudi Arabia", "SA"), ("Senegal", "SN"), ("Serbia", "RS"), ("Singapore", "SG"),
    ("Slovakia", "SK"), ("Slovenia", "SI"), ("South Africa", "ZA"), ("South Korea", "KR"),
    ("Spain", "ES"), ("Sweden", "SE"), ("Switzerland", "CH"), ("Tanzania", "TZ"),
    ("Thailand", "TH"), ("Tunisia", "TN"), ("Turkey", "TR"), ("Ukraine", "UA"),
    ("United Arab Emirates", "AE"), ("United Kingdom", "GB"), ("United States", "US"),
    ("Uruguay", "UY"), ("Venezuela", "VE"), ("Vietnam", "VN"),
)  # fmt: skip
"""Countries a searched name is also found in (with a qualifier, the tool asks for several)."""


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.casefold().encode()).digest()[:4], "big")


def _key(name: str) -> str:
    """A city name for lookup: case, accents and spacing do not matter."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def _coordinates(seed: int) -> dict[str, float]:
    return {
        "latitude": round((seed % 12000) / 100 - 60, 4),
        "longitude": round((seed // 12000 % 36000) / 100 - 180, 4),
    }


def _place(name: str) -> dict[str, Any]:
    """The first result for `name`: its real country for a well-known city, else Testland
    (coordinates from the name either way, so a city's readings never depend on the query)."""
    country, code, region = CITIES.get(_key(name), ("Testland", "TL", ""))
    place = {
        "name": name.strip().title(),
        "country": country,
        "country_code": code,
        **_coordinates(_seed(name.strip())),
        "timezone": "UTC",
    }
    if region:
        place["admin1"] = region
    return place


def _elsewhere(name: str) -> list[dict[str, Any]]:
    """The same name in every country of `COUNTRIES` and every US state."""
    from agents.weather import US_STATES

    title = name.strip().title()
    regions = [(country, code, "") for country, code in COUNTRIES]
    regions += [("United States", "US", state) for state in US_STATES.values()]
    return [
        {
            "name": title,
            "country": country,
            "country_code": code,
            **({"admin1": region} if region else {}),
            **_coordinates(_seed(f"{title}|{country}|{region}")),
            "timezone": "UTC",
        }
        for country, code, region in regions
    ]


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
        results = [_place(params["name"])]
        if int(params.get("count", "1")) > 1:
            results += _elsewhere(params["name"])
        return httpx.Response(200, json={"results": results})
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
