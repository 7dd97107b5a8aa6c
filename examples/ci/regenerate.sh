#!/usr/bin/env sh
# Regenerate an MCP server when the application it wraps has changed.
#
# Usage: regenerate.sh CONFIG [MODEL]
#
#   CONFIG  the fiskgen config (Fisk AI format), e.g. nats.yaml
#   MODEL   the committed introspection snapshot (default: model.json next to CONFIG)
#
# Environment:
#   FISKGEN       the fiskgen binary (default: fiskgen on PATH)
#   OUTPUT        where to put the server binary (default: ./<identity>-mcp, fiskgen's default)
#   SMOKE_TOOL    a read-only tool to call in the smoke test (required)
#   SMOKE_ARGS    its JSON arguments (default: {})
#   SERVER_ARGS   extra arguments for the server in the smoke test, e.g. --application-path ...
#   FORCE=1       rebuild even when nothing changed
#
# Exit status: 0 when nothing changed or the server was rebuilt and passed the smoke test,
# 1 when a step failed. Every step says what it does; the last line names the binary.
set -eu

config=${1:?usage: regenerate.sh CONFIG [MODEL]}
model=${2:-$(dirname "$config")/model.json}
fiskgen=${FISKGEN:-fiskgen}
: "${SMOKE_TOOL:?set SMOKE_TOOL to a read-only tool of the server}"
smoke_args=${SMOKE_ARGS:-"{}"}

step() { printf '==> %s\n' "$*"; }

step "fiskgen check $config --model $model"
set +e
"$fiskgen" check "$config" --model "$model"
status=$?
set -e
case $status in
  0) if [ "${FORCE:-0}" != 1 ]; then step "nothing the server serves changed"; exit 0; fi ;;
  1) step "the application changed: regenerating" ;;
  *) echo "regenerate.sh: fiskgen check failed (exit $status)" >&2; exit 1 ;;
esac

step "fiskgen introspect $config -o $model"
"$fiskgen" introspect "$config" -o "$model"

step "fiskgen build $config"
if [ -n "${OUTPUT:-}" ]; then
  "$fiskgen" build "$config" -o "$OUTPUT"
  binary=$OUTPUT
else
  "$fiskgen" build "$config"
  identity=$("$fiskgen" info --json "$config" | sed -n 's/^  "identity": "\(.*\)",$/\1/p')
  binary=./$identity-mcp
fi

step "smoke test: tools/list and tools/call $SMOKE_TOOL over stdio"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086 # SERVER_ARGS is a list of words
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"regenerate.sh","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"$SMOKE_TOOL\",\"arguments\":$smoke_args}}" \
  | "$binary" --stdio ${SERVER_ARGS:-} >"$out"
if ! grep '"id":2' "$out" | grep -q "\"name\":\"$SMOKE_TOOL\""; then
  echo "regenerate.sh: tools/list does not list $SMOKE_TOOL:" >&2; cat "$out" >&2; exit 1
fi
if ! grep '"id":3' "$out" | grep -q '"isError":false'; then
  echo "regenerate.sh: calling $SMOKE_TOOL failed:" >&2; cat "$out" >&2; exit 1
fi
if ! grep '"id":3' "$out" | grep -q '"exit_code":0'; then
  echo "regenerate.sh: $SMOKE_TOOL did not exit 0:" >&2; cat "$out" >&2; exit 1
fi

step "rebuilt and smoke-tested: $binary"
