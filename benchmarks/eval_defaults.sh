#!/usr/bin/env bash
# The measurement that chooses scoping's defaults (issue: "defaults chosen by measurement"): every
# candidate configuration on the local 1.5B model, each strategy on a freshly started server, two
# runs each, on the tuning half (`--suite example`) and the held-out half
# (`--suite example-heldout`), with the example agent's 9 tools and with 40 distractors (49 tools).
# Choose on the tuning half; report the held-out half. Never run from .ci/run (hours on 2 cores).
#
# Usage:  bash benchmarks/eval_defaults.sh [run|table]
#   run    run what is missing (resumable: finished tasks stay in the results files)
#   table  print one table per suite, tool count and run from the results files (no model call)
# Environment: as benchmarks/local_model.sh (PYTHON, THREADS, PORT, ATTENTION_SCOPING_LLM_DIR);
#   STRATEGIES (default below), SUITES (default "example example-heldout"), TOOLS ("9 49"),
#   RUNS ("1 2"), OUT (default $ATTENTION_SCOPING_LLM_DIR/defaults, i.e. .cache/llm/defaults),
#   EXTRA (more eval options for every run, e.g. "--self-heal"; give each set its own OUT).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ATTENTION_SCOPING_LLM_DIR:-$REPO/.cache/llm}"
OUT="${OUT:-$DIR/defaults}"
PY="${PYTHON:-python3}"
STRATEGIES="${STRATEGIES:-eager scoped scoped-compact scoped-model scoped-compact-model}"
SUITES="${SUITES:-example example-heldout}"
TOOLS="${TOOLS:-9 49}"
RUNS="${RUNS:-1 2}"
MODEL_NAME=qwen2.5-coder-1.5b-q4_k_m
mkdir -p "$OUT"

distractors() { if [ "$1" = 49 ]; then echo "--distractors 40"; fi; }

run_all() {
  local suite tools run strategy results
  for suite in $SUITES; do
    for tools in $TOOLS; do
      for run in $RUNS; do
        results="$OUT/$suite-$tools-run$run.jsonl"
        for strategy in $STRATEGIES; do
          # a fresh server per strategy: no strategy reads another's cached prompts
          SUITE="$suite" STRATEGIES="$strategy" CTX=16384 RESULTS="$results" \
            JSON="$OUT/$suite-$tools-run$run-$strategy.json" \
            EVAL_ARGS="$(distractors "$tools") --resume ${EXTRA:-}" \
            bash "$REPO/benchmarks/local_model.sh" eval
        done
      done
    done
  done
}

tables() {
  local suite tools run results list
  list="$(echo "$STRATEGIES" | tr ' ' ',')"
  for suite in $SUITES; do
    for tools in $TOOLS; do
      for run in $RUNS; do
        results="$OUT/$suite-$tools-run$run.jsonl"
        [ -s "$results" ] || continue
        echo "## $suite, $tools tools, run $run"
        # shellcheck disable=SC2046  # distractors is a list of options
        PYTHONPATH="$REPO" "$PY" -m attention_scoping_lab.cli eval --suite "$suite" \
          --strategies "$list" $(distractors "$tools") --model "$MODEL_NAME" \
          --base-url http://127.0.0.1:1/v1 --results "$results" --resume --no-check --quiet ${EXTRA:-}
      done
    done
  done
}

case "${1:-run}" in
  run) run_all ;;
  table) tables ;;
  *) echo "error: unknown step '$1' (run|table)" >&2; exit 2 ;;
esac
