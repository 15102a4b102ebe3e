"""Empty a llama.cpp server's KV cache before every task, so a local eval repeats exactly.

llama.cpp's server reuses the previous prompt's cache, and the numbers it computes for a
reused prefix differ slightly from a fresh one. At temperature 0 a task's outcome then depends
on which task ran before it: docs/scoping.md measured byte-identical requests that changed
their answer between runs. Erasing every slot before a task (`POST /slots/{id}?action=erase`)
makes each task start from the same empty cache, while the calls inside a task still reuse
their own prefix. The server must allow slot actions (`--slot-save-path DIR`) and should not
keep a host-memory prompt cache (`--cache-ram 0`), which would otherwise restore a prefix.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from attention_scoping_lab.eval.endpoint import EndpointError
from attention_scoping_lab.eval.retry import EndpointRejected

SLOTS_HINT = "start llama-server with --slot-save-path DIR --cache-ram 0"


def server_root(base_url: str) -> str:
    """The server's root URL from its OpenAI-compatible base URL (`.../v1` dropped)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _slot_ids(http: httpx.Client, root: str) -> list[int]:
    """The ids of the server's slots (`GET /slots`)."""
    try:
        response = http.get(f"{root}/slots")
    except httpx.HTTPError as exc:
        msg = f"cannot reach {root}/slots ({exc or type(exc).__name__})"
        raise EndpointError(msg) from None
    if response.status_code != 200:
        status = response.status_code
        msg = f"{root}/slots answered HTTP {status}: not a llama.cpp server with slots"
        raise EndpointError(msg)
    try:
        slots = response.json()
        return [int(slot["id"]) for slot in slots]
    except (ValueError, TypeError, KeyError):
        msg = f"{root}/slots did not answer a list of slots"
        raise EndpointError(msg) from None


def slot_eraser(base_url: str, client: httpx.Client | None = None) -> Callable[[], None]:
    """A function that erases every slot of the llama.cpp server at `base_url`.

    It erases once now, so a server that refuses slot actions fails before any task runs;
    a later failure raises `EndpointRejected`, which stops the eval.

    Raises:
        EndpointError: no slots endpoint, or slot actions are disabled (the message says how
            to start the server).
    """
    http = client or httpx.Client(timeout=30.0)
    root = server_root(base_url)
    ids = _slot_ids(http, root)

    def erase() -> None:
        """Erase every slot's cache."""
        for slot in ids:
            try:
                response = http.post(f"{root}/slots/{slot}", params={"action": "erase"})
            except httpx.HTTPError as exc:
                msg = f"cannot erase slot {slot} at {root} ({exc or type(exc).__name__})"
                raise EndpointRejected(msg) from None
            if response.status_code != 200:
                msg = (
                    f"{root} refused to erase slot {slot} (HTTP {response.status_code}): "
                    f"{SLOTS_HINT}"
                )
                raise EndpointRejected(msg)

    try:
        erase()
    except EndpointRejected as exc:
        raise EndpointError(str(exc)) from None
    return erase
