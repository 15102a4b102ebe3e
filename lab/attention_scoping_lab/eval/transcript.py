"""What happened in one task: every model call (tokens, time, tools offered and called) and
every tool call that ran. Framework-free; `recorder.py` fills it from inside the agent."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field, replace

from attention_scoping_lab.eval.tasks import EvalTask, ToolCallMade


@dataclass(frozen=True)
class ModelCall:
    """One model call as the endpoint answered it."""

    seconds: float
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    offered: tuple[str, ...]
    called: tuple[str, ...]
    """Names of the tool calls in the reply (after any text-call conversion)."""
    text_calls: int = 0
    """Tool calls found written in the reply's text (0 when the reply had real tool calls)."""
    converted: int = 0
    """Of those, how many were turned into real calls (`--parse-text-tool-calls`)."""
    retries: int = 0


@dataclass
class Transcript:
    """Everything recorded for one task run; safe to update from the agent's threads."""

    task: EvalTask
    calls: list[ModelCall] = field(default_factory=list)
    tools: list[ToolCallMade] = field(default_factory=list)
    first_choice: str | None = None
    """The first domain tool the model asked for (gateway calls unwrapped)."""
    hallucinated: int = 0
    """Tool calls naming a tool that does not exist anywhere in the suite."""
    invalid_args: int = 0
    """Calls to a real tool whose arguments fail its JSON schema."""
    last_text: str = ""
    """The model's last reply text, cut short (for reading failures)."""
    requested: list[str] = field(default_factory=list)
    """Every domain tool the model asked for, in order (run or refused)."""
    answers: list[str] = field(default_factory=list)
    """The reply that ended each user turn, whole: what the user got (judged)."""
    turn: int = 0
    """The user turn under way (0-based): every tool call is stamped with it."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _asked: dict[str, int] = field(default_factory=dict, repr=False)
    """Call id -> its place among the calls the model asked for."""
    _places: list[float] = field(default_factory=list, repr=False)
    """The place of each call in `tools` (calls of one reply run at once, finish in any
    order, and are kept in the order the model made them)."""

    def add_call(self, call: ModelCall) -> None:
        """Record a model call."""
        with self._lock:
            self.calls.append(call)

    def begin_turn(self, turn: int) -> None:
        """Note that user turn `turn` (0-based) starts: the answer is judged per turn."""
        with self._lock:
            self.turn = turn

    def add_tool(self, made: ToolCallMade, call_id: str | None = None) -> None:
        """Record a tool call that ran, in the turn under way, in the order the model asked
        for it (`call_id`, noted by `note_choice`; unknown: after every call noted so far)."""
        with self._lock:
            if made.turn is None:
                made = replace(made, turn=self.turn)
            place = float(self._asked.get(call_id or "", len(self.requested)))
            at = bisect.bisect_right(self._places, place)
            self._places.insert(at, place)
            self.tools.insert(at, made)

    def note_choice(
        self, name: str, *, known: bool, valid: bool | None, call_id: str | None = None
    ) -> None:
        """Record a domain tool call the model made (before it runs), by its call id."""
        with self._lock:
            if self.first_choice is None:
                self.first_choice = name
            if call_id:
                self._asked[call_id] = len(self.requested)
            self.requested.append(name)
            if not known:
                self.hallucinated += 1
            elif valid is False:
                self.invalid_args += 1

    def add_answer(self, text: str) -> None:
        """Record the reply that ended a user turn."""
        with self._lock:
            self.answers.append(text)

    def has_domain_call(self) -> bool:
        """Whether the model already chose a domain tool."""
        return self.first_choice is not None
