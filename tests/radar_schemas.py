"""Tool schemas the hesitation radar tests judge messages against."""

from __future__ import annotations

from typing import Any

REMINDER: dict[str, Any] = {
    "name": "scheduled_jobs",
    "parameters": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "message": {"type": "string"},
            "schedule_time": {"type": "string", "default": "+30m"},
            "folder": {"type": "string"},
            "notify_email": {"type": "boolean"},
        },
        "required": ["title", "message"],
    },
}
TRANSFER: dict[str, Any] = {
    "name": "create_payment_transfer",
    "parameters": {
        "type": "object",
        "properties": {
            "from_account": {"type": "string", "description": "Source account ID."},
            "to_account": {"type": "string", "description": "Destination account ID."},
            "amount": {"type": "number"},
            "currency": {"type": "string", "default": "USD"},
            "memo": {"type": "string"},
        },
        "required": ["from_account", "to_account", "amount"],
    },
}
TABLE: dict[str, Any] = {
    "name": "restaurant_reservation",
    "parameters": {
        "type": "object",
        "properties": {
            "restaurant_id": {"type": "string"},
            "date": {"type": "string", "description": "YYYY-MM-DD."},
            "time": {"type": "string", "description": "HH:MM, 24h."},
            "party_size": {"type": "integer"},
            "seating": {"type": "string", "enum": ["indoor", "outdoor"], "default": "indoor"},
        },
        "required": ["restaurant_id", "date", "time", "party_size"],
    },
}
EVENT: dict[str, Any] = {
    "name": "create_calendar_event",
    "parameters": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "start_time": {"type": "string", "description": "Start, ISO 8601."},
            "location": {"type": "string"},
            "reminder_minutes": {"type": "integer", "default": 15},
        },
        "required": ["title", "start_time"],
    },
}
DEPLOY: dict[str, Any] = {
    "name": "deploy_service",
    "parameters": {
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "environment": {"type": "string", "enum": ["staging", "production"]},
            "image_tag": {"type": "string"},
            "replicas": {"type": "integer", "default": 2},
            "strategy": {"type": "string", "default": "rolling"},
        },
        "required": ["service", "environment", "image_tag"],
    },
}
