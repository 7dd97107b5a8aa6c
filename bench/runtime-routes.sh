#!/usr/bin/env bash
# What the two ways of giving a generated crate its runtime cost a user, measured side by side
# (docs/install.md, "Embedded runtime or a published fiskgen-runtime"):
#
#   embedded   what fiskgen does: `fiskgen build`, the runtime written from fiskgen itself into
#              its cache and linked into the crate.
#   published  the crate takes `fiskgen-runtime = "=<version>"` from a registry, as prost-build's
#              output takes prost: `fiskgen generate`, then `cargo build`. Simulated without
#              publishing anything: `cargo package` makes the runtime's and the contract's .crate
#              files exactly as crates.io would serve them, and a cargo directory source
#              (`source.crates-io.replace-with`) holds them beside every crates.io dependency
#              (`cargo vendor` from cargo's cache), so cargo resolves and compiles the runtime as
#              a registry crate. The download itself is not timed: its size is reported.
#
# Timed, in ROUNDS rounds (default 3) that interleave the routes (odd rounds run the embedded
# route first at every step, even rounds the published one), each round in fresh directories:
#   first build     fresh crate, cache and target directory; crates.io sources in cargo's cache
#   app change      the fisk application changed (a command's help text, in a copy of the
#                   introspection document): regenerate and rebuild in the warm target directory
#   offline         CARGO_NET_OFFLINE / --offline, fresh crate and cache directory, warm target
# The median of the rounds is reported, with every round's figure. Then, once: an offline build
# of a runtime version cargo never downloaded, and version skew both ways (a fiskgen one version
# ahead of the newest published runtime; a runtime published one version ahead of fiskgen).
# The load average is printed with every measurement: on a shared machine, compare the two
# routes of one round, not runs.
#
# Usage: bench/runtime-routes.sh [WORK_DIR]   (default target/runtime-routes; emptied first)
# Needs: cargo, and `cargo build -p fiskgen` done (or FISKGEN=path/to/fiskgen). About 6 minutes
# per round on an idle 2-core machine (four release builds of the runtime's dependency tree).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$ROOT/target/runtime-routes}
FISKGEN=${FISKGEN:-$ROOT/target/debug/fiskgen}
CARGO=${CARGO:-cargo}
CONFIG=$ROOT/examples/demo/demo.yaml
MODEL=$ROOT/tests/expected/demo/model.json
ROUNDS=${ROUNDS:-3}

[ -x "$FISKGEN" ] || { echo "no fiskgen at $FISKGEN: run cargo build -p fiskgen first" >&2; exit 2; }
grep -q '"help": "Add a task"' "$MODEL" || { echo "$MODEL has no \"Add a task\" help to change" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK/times"
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS FISKGEN_TARGET_DIR

now() { date +%s.%N; }
load() { cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || uptime; }
kib() { awk -v b="$(wc -c <"$1")" 'BEGIN { printf "%.0f KiB", b / 1024 }'; }

# Runs "$@"; prints "<seconds> ok" or "<seconds> failed: <cargo's first error line>".
timed() {
  local log=$WORK/log.$RANDOM start end status
  start=$(now)
  if "$@" >"$log" 2>&1; then status=ok; else status="failed: $(grep -m1 -E '^error' "$log" || tail -n1 "$log")"; fi
  end=$(now)
  awk -v a="$start" -v b="$end" -v s="$status" 'BEGIN { printf "%.1f %s\n", b - a, s }'
}

embedded_build() { # CRATE_DIR CACHE TARGET MODEL [env...]
  local crate=$1 cache=$2 target=$3 model=$4
  shift 4
  env "$@" XDG_CACHE_HOME="$cache" "$FISKGEN" build "$CONFIG" --model "$model" \
    --crate-dir "$crate" --target-dir "$target" -o "$crate.bin"
}

published_build() { # CRATE_DIR TARGET [--config ...]
  local crate=$1 target=$2
  shift 2
  "$CARGO" build --release --manifest-path "$crate/Cargo.toml" --target-dir "$target" "$@"
}

# What a user of the published route runs after the application changed: `fiskgen generate`
# (which writes the lockfile of the embedded route, so the crate's own is kept), then a build.
published_regenerate() { # CRATE_DIR TARGET MODEL [--config ...]
  local crate=$1 target=$2 model=$3
  shift 3
  cp "$crate/Cargo.lock" "$crate/Cargo.lock.kept"
  "$FISKGEN" generate "$CONFIG" --model "$model" -o "$crate"
  mv "$crate/Cargo.lock.kept" "$crate/Cargo.lock"
  published_build "$crate" "$target" "$@"
}

# record ROW ROUTE RESULT: keeps one measurement ("<seconds> ok|failed: ...").
record() { echo "$3" >>"$WORK/times/$1.$2"; }

# cell ROW ROUTE: "<median> s (<round 1>, <round 2>, ...)", or the failures.
cell() {
  local file=$WORK/times/$1.$2
  if grep -qv ' ok$' "$file"; then
    grep -v ' ok$' "$file" | sed 's/^[0-9.]* //' | sort -u | paste -sd ';'
    return
  fi
  local all median
  all=$(cut -d ' ' -f 1 "$file" | paste -sd ',' | sed 's/,/ s, /g')
  median=$(cut -d ' ' -f 1 "$file" | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  echo "**$median s** ($all s)"
}

echo "# runtime routes, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "- $(rustc -V), $(nproc) cores, load average at the start: $(load)"
echo "- fiskgen: $FISKGEN ($("$FISKGEN" --version)), $ROUNDS rounds"
echo

# The published route's registry: the packaged runtime and contract, and every crates.io crate
# the generated crate needs, as a directory source.
"$CARGO" package --offline --locked --no-verify --allow-dirty --quiet \
  -p fiskgen-contract -p fiskgen-runtime --target-dir "$WORK/package" --manifest-path "$ROOT/Cargo.toml"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1)
NEXT=$(echo "$VERSION" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')
RUNTIME_CRATE=$WORK/package/package/fiskgen-runtime-$VERSION.crate
CONTRACT_CRATE=$WORK/package/package/fiskgen-contract-$VERSION.crate
TEMPLATE=$WORK/published-template
"$FISKGEN" generate "$CONFIG" --model "$MODEL" -o "$TEMPLATE" 2>/dev/null
# cargo vendor resolves the generated crate against the checkout's runtime (path packages are
# not vendored), then the packaged crates are added as registry packages. It vendors the crates
# of every platform, so it downloads those of other platforms that cargo's cache lacks.
"$CARGO" vendor --quiet --manifest-path "$TEMPLATE/Cargo.toml" \
  --config "patch.crates-io.fiskgen-runtime.path=\"$ROOT/runtime\"" "$WORK/registry" >/dev/null
for crate in "$RUNTIME_CRATE" "$CONTRACT_CRATE"; do
  tar xzf "$crate" -C "$WORK/registry"
  name=$(basename "$crate" .crate)
  printf '{"files":{},"package":"%s"}\n' "$(sha256sum "$crate" | cut -d ' ' -f 1)" \
    >"$WORK/registry/$name/.cargo-checksum.json"
done
REGISTRY=(--config 'source.crates-io.replace-with="published"'
  --config "source.published.directory=\"$WORK/registry\"" --offline)
# The published route's lockfile names the runtime as a registry package, with its checksum:
# what fiskgen would write in that route. Cargo writes it once; every round starts from it.
rm -f "$TEMPLATE/Cargo.lock"
"$CARGO" generate-lockfile --manifest-path "$TEMPLATE/Cargo.toml" "${REGISTRY[@]}"
grep -A2 'name = "fiskgen-runtime"' "$TEMPLATE/Cargo.lock" | grep -q '^source = "registry+' ||
  { echo "the published lockfile does not take fiskgen-runtime from the registry" >&2; exit 1; }

echo "## Every measurement"
echo
echo "| round | step | route | result | load average before |"
echo "| --- | --- | --- | --- | --- |"
# step ROUND ROW FIRST_ROUTE: runs the row's embedded and published commands (the shell
# functions row_embedded / row_published), FIRST_ROUTE first.
step() {
  local round=$1 row=$2 routes result l
  if [ "$3" = embedded ]; then routes="embedded published"; else routes="published embedded"; fi
  for route in $routes; do
    l=$(load)
    result=$(timed "row_$route")
    record "$row" "$route" "$result"
    echo "| $round | $row | $route | ${result/ / s, } | $l |"
  done
}

for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then first=embedded; else first=published; fi
  R=$WORK/round$round
  mkdir -p "$R"
  cp -r "$TEMPLATE" "$R/published-crate"
  # The application changed: a command's help text, so one tool's description changes.
  sed "s/\"help\": \"Add a task\"/\"help\": \"Add a task (round $round)\"/" "$MODEL" >"$R/model-changed.json"

  row_embedded() { embedded_build "$R/embedded-crate" "$R/embedded-cache" "$R/embedded-target" "$MODEL"; }
  row_published() { published_build "$R/published-crate" "$R/published-target" "${REGISTRY[@]}"; }
  step "$round" "first build" "$first"

  row_embedded() { embedded_build "$R/embedded-crate" "$R/embedded-cache" "$R/embedded-target" "$R/model-changed.json"; }
  row_published() { published_regenerate "$R/published-crate" "$R/published-target" "$R/model-changed.json" "${REGISTRY[@]}"; }
  step "$round" "app change" "$first"
  grep -rq "round $round" "$R/embedded-crate/src" "$R/published-crate/src" ||
    { echo "the app change did not reach the generated code" >&2; exit 1; }

  cp -r "$TEMPLATE" "$R/published-offline"
  row_embedded() {
    embedded_build "$R/embedded-offline" "$R/embedded-cache-offline" "$R/embedded-target" "$MODEL" CARGO_NET_OFFLINE=true
  }
  row_published() { published_build "$R/published-offline" "$R/published-target" "${REGISTRY[@]}"; }
  step "$round" "offline" "$first"

  EMBEDDED_BIN=$R/embedded-crate.bin
  PUBLISHED_BIN=$R/published-target/release/tasks-mcp
  LAST=$R
  [ "$round" = "$ROUNDS" ] || rm -rf "$R"/*-target
done

# Offline with crates.io as the source and this runtime version never downloaded (a new runtime
# version, a new machine with a copied cargo cache): the embedded route has nothing to fetch.
cp -r "$TEMPLATE" "$WORK/published-undownloaded"
rm -f "$WORK/published-undownloaded/Cargo.lock"
undownloaded_embedded=$(timed embedded_build "$WORK/embedded-undownloaded" "$WORK/embedded-cache-undownloaded" \
  "$LAST/embedded-target" "$MODEL" CARGO_NET_OFFLINE=true)
undownloaded_published=$(timed published_build "$WORK/published-undownloaded" "$LAST/published-target" --offline)

# Version skew, fiskgen ahead: a fiskgen one version ahead of the newest published runtime (built
# from a checkout, or released before the runtime) generates `=<next version>`.
cp -r "$TEMPLATE" "$WORK/published-skew-ahead"
sed -i -E "s/^(fiskgen-runtime = .*)\"=$VERSION\"/\1\"=$NEXT\"/" "$WORK/published-skew-ahead/Cargo.toml"
grep -Eq "^fiskgen-runtime = .*\"=$NEXT\"" "$WORK/published-skew-ahead/Cargo.toml" ||
  { echo "the skew edit missed the dependency line" >&2; exit 1; }
rm -f "$WORK/published-skew-ahead/Cargo.lock"
skew_ahead=$(timed published_build "$WORK/published-skew-ahead" "$LAST/published-target" "${REGISTRY[@]}")

# Version skew, runtime ahead: the registry also holds runtime <next version> (a copy of this
# one); a crate of this fiskgen, resolved anew, still takes the version it pins.
cp -r "$WORK/registry/fiskgen-runtime-$VERSION" "$WORK/registry/fiskgen-runtime-$NEXT"
sed -i "0,/^version = \"$VERSION\"/s//version = \"$NEXT\"/" "$WORK/registry/fiskgen-runtime-$NEXT/Cargo.toml"
grep -q "^version = \"$NEXT\"" "$WORK/registry/fiskgen-runtime-$NEXT/Cargo.toml" ||
  { echo "the next runtime's version edit missed" >&2; exit 1; }
cp -r "$TEMPLATE" "$WORK/published-skew-behind"
rm -f "$WORK/published-skew-behind/Cargo.lock"
skew_behind=$(timed published_build "$WORK/published-skew-behind" "$LAST/published-target" "${REGISTRY[@]}")
taken=$(grep -A1 'name = "fiskgen-runtime"' "$WORK/published-skew-behind/Cargo.lock" | sed -n 's/^version = "\(.*\)"/\1/p')
id=$(basename "$(ls -d "$LAST"/embedded-crate/.fiskgen/*)")

echo
echo "## Medians"
echo
echo "| | embedded | published |"
echo "| --- | --- | --- |"
echo "| what the user downloads besides crates.io's crates | nothing (fiskgen carries the runtime) | fiskgen-runtime $(kib "$RUNTIME_CRATE") + fiskgen-contract $(kib "$CONTRACT_CRATE") (.crate, compressed) |"
echo "| first build (fresh crate, cache and target directory) | $(cell "first build" embedded) | $(cell "first build" published) |"
echo "| rebuild after the fisk app changed (regenerate + build, warm target) | $(cell "app change" embedded) | $(cell "app change" published) |"
echo "| offline build (fresh crate and cache directory, warm target) | $(cell offline embedded) | $(cell offline published) |"
echo "| offline, this runtime version never downloaded (once) | ${undownloaded_embedded/ / s, } | ${undownloaded_published/ / s, } |"
echo "| version skew: fiskgen $NEXT, runtime $VERSION the newest published (once) | none: the crate links the runtime fiskgen carries ($id) | ${skew_ahead/ / s, } |"
echo "| version skew: fiskgen $VERSION, runtime $NEXT also published (once) | none | ${skew_behind/ / s, }; took runtime $taken |"
echo "| binary size | $(kib "$EMBEDDED_BIN") | $(kib "$PUBLISHED_BIN") |"
echo
echo "- load average at the end: $(load)"
