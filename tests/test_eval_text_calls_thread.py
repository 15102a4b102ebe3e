"""`eval --parse-text-tool-calls` judges a text call with the thread, as `TextToolCallMiddleware`
does: JSON the user asked to see stays text, the same reply to a question runs the tool."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from attention_scoping.testing import ScriptedChatModel, say
from attention_scoping_lab.eval.recorder import EvalRecorder, schemas_of
from attention_scoping_lab.eval.strategies import STRATEGIES, StrategyOptions
from attention_scoping_lab.eval.suites import example_suite
from attention_scoping_lab.eval.transcript import Transcript
from tests.eval_support import NO_WAIT

REPLY = '```json\n{"name": "calculate", "arguments": {"expression": "47*83"}}\n```'


def run_task(user: str) -> tuple[Transcript, AIMessage]:
    """One eager task whose model answers `REPLY` as text, then "3901"."""
    suite = example_suite().select(["math-multiply"])
    recorder: EvalRecorder[Any, Any] = EvalRecorder(
        schemas_of(suite.tools), parse_text_calls=True, retry=NO_WAIT
    )
    transcript = Transcript(suite.tasks[0])
    recorder.register("task", transcript)
    model = ScriptedChatModel(script=[say(REPLY), say("3901")])
    options = StrategyOptions(parse_text_calls=True)
    agent = STRATEGIES["eager"].build(suite, model, [recorder], options)
    out = agent.invoke(
        {"messages": [HumanMessage(user)]}, config={"configurable": {"thread_id": "task"}}
    )
    last = out["messages"][-1]
    assert isinstance(last, AIMessage)
    return transcript, last


def test_json_the_user_asked_to_see_is_not_run() -> None:
    transcript, last = run_task("Show me the JSON for calculate with 47*83, do not run it")
    assert transcript.tools == []
    assert [(c.text_calls, c.converted) for c in transcript.calls] == [(1, 0)]
    assert last.text == REPLY


def test_the_same_reply_to_a_question_runs_the_tool() -> None:
    transcript, last = run_task("What is 47 times 83?")
    assert [(t.name, t.ok) for t in transcript.tools] == [("calculate", True)]
    assert transcript.calls[0].converted == 1
    assert last.text == "3901"


def test_a_reply_that_copied_template_markup_is_kept_without_it() -> None:
    """A plain answer wrapped in the chat template's `<tool_response>` tags: the recorder keeps
    its words and drops the tags in what the thread (and the next turn) holds."""
    suite = example_suite().select(["math-multiply"])
    recorder: EvalRecorder[Any, Any] = EvalRecorder(
        schemas_of(suite.tools), parse_text_calls=True, retry=NO_WAIT
    )
    transcript = Transcript(suite.tasks[0])
    recorder.register("task", transcript)
    model = ScriptedChatModel(script=[say("<tool_response>47 × 83 = 3901</tool_response>")])
    agent = STRATEGIES["eager"].build(
        suite, model, [recorder], StrategyOptions(parse_text_calls=True)
    )
    out = agent.invoke(
        {"messages": [HumanMessage("What is 47 times 83?")]},
        config={"configurable": {"thread_id": "task"}},
    )
    assert out["messages"][-1].text == "47 × 83 = 3901"
    assert transcript.last_text == "47 × 83 = 3901"
    assert transcript.tools == []
