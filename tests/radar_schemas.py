"""Tool schemas the hesitation radar tests judge messages against."""

from __future__ import annotations

from typing import Any


def function_schema(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A function tool as the radar reads it: its name and an object schema of `properties`,
    `required` among them."""
    return {
        "name": name,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


REMINDER = function_schema(
    "scheduled_jobs",
    {
        "title": {"type": "string"},
        "message": {"type": "string"},
        "schedule_time": {"type": "string", "default": "+30m"},
        "folder": {"type": "string"},
        "notify_email": {"type": "boolean"},
    },
    ["title", "message"],
)
TRANSFER = function_schema(
    "create_payment_transfer",
    {
        "from_account": {"type": "string", "description": "Source account ID."},
        "to_account": {"type": "string", "description": "Destination account ID."},
        "amount": {"type": "number"},
        "currency": {"type": "string", "default": "USD"},
        "memo": {"type": "string"},
    },
    ["from_account", "to_account", "amount"],
)
TABLE = function_schema(
    "restaurant_reservation",
    {
        "restaurant_id": {"type": "string"},
        "date": {"type": "string", "description": "YYYY-MM-DD."},
        "time": {"type": "string", "description": "HH:MM, 24h."},
        "party_size": {"type": "integer"},
        "seating": {"type": "string", "enum": ["indoor", "outdoor"], "default": "indoor"},
    },
    ["restaurant_id", "date", "time", "party_size"],
)
EVENT = function_schema(
    "create_calendar_event",
    {
        "title": {"type": "string"},
        "start_time": {"type": "string", "description": "Start, ISO 8601."},
        "location": {"type": "string"},
        "reminder_minutes": {"type": "integer", "default": 15},
    },
    ["title", "start_time"],
)
DEPLOY = function_schema(
    "deploy_service",
    {
        "service": {"type": "string"},
        "environment": {"type": "string", "enum": ["staging", "production"]},
        "image_tag": {"type": "string"},
        "replicas": {"type": "integer", "default": 2},
        "strategy": {"type": "string", "default": "rolling"},
    },
    ["service", "environment", "image_tag"],
)
