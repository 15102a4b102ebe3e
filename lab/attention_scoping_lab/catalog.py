"""Tool catalogs and labelled queries: one `ToolSpec` type for every source, strict loaders.

Sources: catalog JSON-lines files (`{"id", "name", "description", "parameters", "server"}` per
line, optionally `"preconditions"`: a declarative `{"state key": value}` map), OpenAI-style tools
JSON files, and LangChain tools. Query lines may carry a `"state"` object (the agent state the
query is asked in, checked against tool preconditions by benchmarks). Loaders reject malformed
input with an error naming the file and line, never a traceback from deep inside.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_scoping.common.text import did_you_mean_hint
from attention_scoping.common.tool import ToolSpec

REQUIRED_TOOL_FIELDS = ("id", "name", "description", "parameters")
REQUIRED_QUERY_FIELDS = ("id", "query", "gold_ids")


class CatalogError(ValueError):
    """Malformed catalog or query input; the message names the file and line."""

    def __init__(self, path: str | Path, line: int | None, problem: str) -> None:
        """Build the message `path:line: problem`."""
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Query:
    """A labelled query: the user text and the catalog ids of the tools that answer it."""

    id: str
    query: str
    gold_ids: tuple[str, ...]
    system: str | None = None
    state: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """Agent state the query is asked in (for tool preconditions); empty by default."""


def _lone_surrogate(value: Any) -> str | None:
    """The first string in `value` holding a lone surrogate (not encodable text), if any."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def parse_json(path: Path, number: int | None, text: str) -> Any:
    """`json.loads(text)`, with every way it can fail as a `CatalogError` naming file and line:
    bad syntax, numbers too long to convert, nesting too deep, lone surrogates."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        line = number if number is not None else exc.lineno
        raise CatalogError(path, line, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise CatalogError(path, number, "invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise CatalogError(path, number, f"invalid JSON ({str(exc).split(';')[0]})") from None
    bad = _lone_surrogate(value)
    if bad is not None:
        shown = bad.encode("utf-8", "backslashreplace").decode("ascii", "replace")[:60]
        raise CatalogError(
            path, number, f"a string holds a lone surrogate, which is not valid text: {shown!r}"
        )
    return value


def _parse_json_line(path: Path, number: int, text: str) -> dict[str, Any]:
    value = parse_json(path, number, text)
    if not isinstance(value, dict):
        raise CatalogError(path, number, f"expected a JSON object, got {type(value).__name__}")
    return value


def _read_text(path: Path) -> str:
    """The file's UTF-8 text, or a CatalogError saying it is missing or not text."""
    if not path.is_file():
        raise CatalogError(path, None, "file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(path, None, f"not UTF-8 text ({exc.reason})") from None


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if line.strip():
            yield number, line


def _require(path: Path, number: int, record: Mapping[str, Any], fields: Sequence[str]) -> None:
    missing = [f for f in fields if f not in record]
    if missing:
        have = ", ".join(sorted(record)) or "none"
        raise CatalogError(path, number, f"missing field {missing[0]!r} (fields present: {have})")


def _spec(path: Path, number: int | None, record: Mapping[str, Any]) -> ToolSpec:
    for key in ("id", "name"):
        value = record[key]
        if not isinstance(value, str) or not value.strip():
            raise CatalogError(path, number, f"field {key!r} must be a non-empty string")
    if not isinstance(record["description"], str):
        raise CatalogError(path, number, "field 'description' must be a string")
    params = record["parameters"]
    if params is None:
        params = {"type": "object", "properties": {}}
    if not isinstance(params, dict):
        raise CatalogError(
            path, number, f"field 'parameters' must be a JSON Schema object, not {params!r:.40}"
        )
    server = record.get("server")
    if server is not None and not isinstance(server, (str, int)):
        raise CatalogError(path, number, f"field 'server' must be a string, not {server!r:.40}")
    preconditions = record.get("preconditions")
    if preconditions is not None and not isinstance(preconditions, dict):
        raise CatalogError(
            path, number, "field 'preconditions' must be an object of state key -> value"
        )
    return ToolSpec(
        id=record["id"],
        name=record["name"],
        description=record["description"],
        parameters=params,
        server=str(server) if server is not None else None,
        preconditions=preconditions or None,
    )


def _unique(path: Path, specs: list[tuple[int | None, ToolSpec]]) -> list[ToolSpec]:
    seen: dict[str, int | None] = {}
    for number, spec in specs:
        if spec.id in seen:
            first = seen[spec.id]
            raise CatalogError(
                path, number, f"duplicate tool id {spec.id!r} (first on line {first})"
            )
        seen[spec.id] = number
    if not specs:
        raise CatalogError(path, None, "no tools found")
    return [s for _, s in specs]


def load_catalog(path: str | Path) -> list[ToolSpec]:
    """Load a catalog: JSON lines (`.jsonl`) or an OpenAI-style tools JSON file (`.json`).

    Raises:
        CatalogError: naming the file and line of the first problem.
    """
    p = Path(path)
    if p.suffix == ".json":
        return load_openai_tools(p)
    specs: list[tuple[int | None, ToolSpec]] = []
    for number, line in _lines(p):
        record = _parse_json_line(p, number, line)
        _require(p, number, record, REQUIRED_TOOL_FIELDS)
        specs.append((number, _spec(p, number, record)))
    return _unique(p, specs)


def load_openai_tools(path: str | Path) -> list[ToolSpec]:
    """Load a JSON file holding a tools array (`[{"type": "function", "function": {...}}]`,
    bare function objects, or `{"tools": [...]}`); ids are the function names."""
    p = Path(path)
    data = parse_json(p, None, _read_text(p))
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        raise CatalogError(p, None, "expected a JSON array of tools or {'tools': [...]}")
    specs: list[tuple[int | None, ToolSpec]] = []
    for index, item in enumerate(data):
        fn = item.get("function", item) if isinstance(item, dict) else None
        if not isinstance(fn, dict):
            raise CatalogError(p, None, f"tool #{index + 1} is not an object")
        record = {
            "id": fn.get("name"),
            "name": fn.get("name"),
            "description": fn.get("description", ""),
            "parameters": fn.get("parameters"),
        }
        if record["name"] is None:
            raise CatalogError(p, None, f"tool #{index + 1} has no 'name'")
        specs.append((None, _spec(p, None, record)))
    return _unique(p, specs)


def load_queries(path: str | Path, catalog: Iterable[ToolSpec]) -> list[Query]:
    """Load labelled queries and check every gold id against `catalog`.

    Raises:
        CatalogError: naming the file and line of a malformed record or an unknown gold id.
    """
    p = Path(path)
    specs = list(catalog)
    ids = {spec.id for spec in specs}
    by_name = {spec.name: spec.id for spec in specs if spec.name != spec.id}
    out: list[Query] = []
    seen: set[str] = set()
    for number, line in _lines(p):
        record = _parse_json_line(p, number, line)
        _require(p, number, record, REQUIRED_QUERY_FIELDS)
        qid, text, gold = record["id"], record["query"], record["gold_ids"]
        if not isinstance(text, str) or not text.strip():
            raise CatalogError(p, number, "field 'query' must be a non-empty string")
        if not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold):
            raise CatalogError(p, number, "field 'gold_ids' must be a non-empty list of strings")
        for gid in gold:
            if gid not in ids and gid in by_name:
                raise CatalogError(
                    p,
                    number,
                    f"gold id {gid!r} is a tool name, not a catalog id (that tool's id is "
                    f"{by_name[gid]!r}); 'gold_ids' must be catalog ids",
                )
            if gid not in ids:
                hint = did_you_mean_hint(gid, ids)
                raise CatalogError(p, number, f"gold id {gid!r} is not in the catalog{hint}")
        key = str(qid)
        if key in seen:
            raise CatalogError(p, number, f"duplicate query id {key!r}")
        seen.add(key)
        if len(set(gold)) != len(gold):
            raise CatalogError(p, number, "field 'gold_ids' lists a tool twice")
        state = record.get("state", {})
        if not isinstance(state, dict):
            raise CatalogError(p, number, "field 'state' must be an object")
        system = record.get("system")
        out.append(
            Query(key, text, tuple(gold), system if isinstance(system, str) else None, state)
        )
    if not out:
        raise CatalogError(p, None, "no queries found")
    return out
