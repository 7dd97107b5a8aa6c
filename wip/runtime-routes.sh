#!/usr/bin/env bash
# What the two ways of giving a generated crate its runtime cost a user, measured side by side
# in one run (docs/install.md, "Embedded runtime or a published fiskgen-runtime"):
#
#   embedded   what fiskgen does: `fiskgen build`, the runtime written from fiskgen itself into
#              its cache and linked into the crate.
#   published  the crate takes `fiskgen-runtime = "=<version>"` from a registry, as prost-build's
#              output takes prost. Simulated without publishing anything: `cargo package` makes
#              the runtime's and the contract's .crate files exactly as crates.io would serve
#              them, and a cargo directory source (`source.crates-io.replace-with`) holds them
#              beside every crates.io dependency (`cargo vendor` from cargo's cache), so cargo
#              resolves and compiles the runtime as a registry crate. The download itself is
#              not timed: its size is reported.
#
# Rows: the first build (fresh target directory, crates.io sources already in cargo's cache),
# a rebuild after the generated crate changed, an offline build in a fresh crate and cache
# directory, offline with the runtime never downloaded, and version skew (a fiskgen one version
# ahead of the published runtime). The load average is recorded at every step: on a shared
# machine, compare the two routes of one run, not runs.
#
# Usage: bench/runtime-routes.sh [WORK_DIR]   (default target/runtime-routes; emptied first)
# Needs: cargo, and `cargo build -p fiskgen` done (or FISKGEN=path/to/fiskgen).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$ROOT/target/runtime-routes}
FISKGEN=${FISKGEN:-$ROOT/target/debug/fiskgen}
CARGO=${CARGO:-cargo}
CONFIG=$ROOT/examples/demo/demo.yaml
MODEL=$ROOT/tests/expected/demo/model.json
REBUILDS=${REBUILDS:-3}

[ -x "$FISKGEN" ] || { echo "no fiskgen at $FISKGEN: run cargo build -p fiskgen first" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK"
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS FISKGEN_TARGET_DIR

now() { date +%s.%N; }
load() { cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || uptime; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
kib() { awk -v b="$(wc -c <"$1")" 'BEGIN { printf "%.0f KiB", b / 1024 }'; }

# Runs "$@", printing "<seconds> ok" or "<seconds> failed: <cargo's first error line>".
timed() {
  local log=$WORK/log.$RANDOM start end status
  start=$(now)
  if "$@" >"$log" 2>&1; then status=ok; else status="failed: $(grep -m1 -E '^error' "$log" || tail -n1 "$log")"; fi
  end=$(now)
  echo "$(seconds "$start" "$end") s, $status"
}

embedded_build() { # CRATE_DIR CACHE TARGET [env...]
  local crate=$1 cache=$2 target=$3
  shift 3
  env "$@" XDG_CACHE_HOME="$cache" "$FISKGEN" build "$CONFIG" --model "$MODEL" \
    --crate-dir "$crate" --target-dir "$target" -o "$crate.bin"
}

published_build() { # CRATE_DIR TARGET [--config ...]
  local crate=$1 target=$2
  shift 2
  "$CARGO" build --release --manifest-path "$crate/Cargo.toml" --target-dir "$target" "$@"
}

echo "# runtime routes, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "- $(rustc -V), $(nproc) cores, load average at the start: $(load)"
echo "- fiskgen: $FISKGEN ($("$FISKGEN" --version))"
echo

# The published route's registry: the packaged runtime and contract, and every crates.io crate
# the generated crate needs, as a directory source.
"$CARGO" package --offline --locked --no-verify --allow-dirty --quiet \
  -p fiskgen-contract -p fiskgen-runtime --target-dir "$WORK/package" --manifest-path "$ROOT/Cargo.toml"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1)
RUNTIME_CRATE=$WORK/package/package/fiskgen-runtime-$VERSION.crate
CONTRACT_CRATE=$WORK/package/package/fiskgen-contract-$VERSION.crate
"$FISKGEN" generate "$CONFIG" --model "$MODEL" -o "$WORK/published/crate" 2>/dev/null
# cargo vendor resolves the generated crate against the checkout's runtime (path packages are
# not vendored), then the packaged crates are added as registry packages.
"$CARGO" vendor --quiet --offline --manifest-path "$WORK/published/crate/Cargo.toml" \
  --config "patch.crates-io.fiskgen-runtime.path=\"$ROOT/runtime\"" "$WORK/registry" >/dev/null
for crate in "$RUNTIME_CRATE" "$CONTRACT_CRATE"; do
  tar xzf "$crate" -C "$WORK/registry"
  name=$(basename "$crate" .crate)
  printf '{"files":{},"package":"%s"}\n' "$(sha256sum "$crate" | cut -d ' ' -f 1)" \
    >"$WORK/registry/$name/.cargo-checksum.json"
done
# The published route's lockfile names the runtime as a registry package: let cargo write it.
rm -f "$WORK/published/crate/Cargo.lock"
REGISTRY=(--config 'source.crates-io.replace-with="published"'
  --config "source.published.directory=\"$WORK/registry\"" --offline)

echo "| | embedded | published | load average |"
echo "| --- | --- | --- | --- |"
row "what the user downloads besides crates.io's crates" \
  "nothing (fiskgen carries the runtime; fiskgen's own .crate is that much bigger)" \
  "fiskgen-runtime $(kib "$RUNTIME_CRATE") + fiskgen-contract $(kib "$CONTRACT_CRATE") (.crate, compressed)" "-"

# First builds, one route after the other, each in a fresh target directory.
l=$(load)
e=$(timed embedded_build "$WORK/embedded/crate" "$WORK/embedded/cache" "$WORK/embedded/target")
p=$(timed published_build "$WORK/published/crate" "$WORK/published/target" "${REGISTRY[@]}")
row "first build (fresh target directory)" "$e" "$p" "$l → $(load)"

# Rebuilds after the generated crate changed, alternating: `fiskgen build` again (it rewrites
# the edited src/main.rs, as a regeneration after a config change does), and `cargo build` of
# the edited crate.
for i in $(seq 1 "$REBUILDS"); do
  echo "// rebuild $i" >>"$WORK/embedded/crate/src/main.rs"
  echo "// rebuild $i" >>"$WORK/published/crate/src/main.rs"
  l=$(load)
  e=$(timed embedded_build "$WORK/embedded/crate" "$WORK/embedded/cache" "$WORK/embedded/target")
  p=$(timed published_build "$WORK/published/crate" "$WORK/published/target" "${REGISTRY[@]}")
  row "rebuild after the generated crate changed ($i)" "$e" "$p" "$l → $(load)"
done

# Offline, in a fresh crate and cache directory with the warm target directory: the embedded
# runtime is written from fiskgen; the published one comes from cargo's cache (here the
# directory source).
l=$(load)
e=$(timed embedded_build "$WORK/embedded/crate2" "$WORK/embedded/cache2" "$WORK/embedded/target" CARGO_NET_OFFLINE=true)
cp -r "$WORK/published/crate" "$WORK/published/crate2"
p=$(timed published_build "$WORK/published/crate2" "$WORK/published/target" "${REGISTRY[@]}")
row "offline, runtime in cargo's cache (fresh crate directory, warm target)" "$e" "$p" "$l → $(load)"

# Offline with crates.io as the source and the runtime never downloaded (a new runtime
# version, a new machine with a copied cargo cache): the embedded route has nothing to fetch.
l=$(load)
e=$(timed embedded_build "$WORK/embedded/crate3" "$WORK/embedded/cache3" "$WORK/embedded/target" CARGO_NET_OFFLINE=true)
cp -r "$WORK/published/crate" "$WORK/published/crate3"
rm -f "$WORK/published/crate3/Cargo.lock"
p=$(timed published_build "$WORK/published/crate3" "$WORK/published/target" --offline)
row "offline, runtime version never downloaded" "$e" "$p" "$l → $(load)"

# Version skew: a fiskgen one version ahead of the published runtime (built from a checkout,
# or released before the runtime) generates `=<next version>`.
NEXT=$(echo "$VERSION" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')
cp -r "$WORK/published/crate" "$WORK/published/skew"
sed -i "s/fiskgen-runtime = \"=$VERSION\"/fiskgen-runtime = \"=$NEXT\"/" "$WORK/published/skew/Cargo.toml"
grep -q "=$NEXT" "$WORK/published/skew/Cargo.toml" || { echo "the skew edit missed" >&2; exit 1; }
rm -f "$WORK/published/skew/Cargo.lock"
l=$(load)
p=$(timed published_build "$WORK/published/skew" "$WORK/published/target" "${REGISTRY[@]}")
id=$(basename "$(ls -d "$WORK"/embedded/crate/.fiskgen/*)")
row "version skew (fiskgen $NEXT, runtime $VERSION published)" \
  "none: the crate links the runtime fiskgen carries ($id)" "$p" "$l → $(load)"

row "binary size" "$(kib "$WORK/embedded/crate.bin")" "$(kib "$WORK/published/target/release/tasks-mcp")" "-"
echo
echo "- load average at the end: $(load)"
