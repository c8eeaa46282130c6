#!/usr/bin/env bash
# Build, check or test the sample games (every sample_games/*/Cargo.toml).
#
#   scripts/build-games.sh build [OUT_DIR]  release wasm of each game to
#                                           OUT_DIR/<dir name>.wasm (default
#                                           sample_games/dist) + SHA256SUMS
#   scripts/build-games.sh check            build into a temporary dir; exit 1
#                                           when a committed .wasm or SHA256SUMS
#                                           differs from the fresh build
#   scripts/build-games.sh test             cargo test for the whole workspace
#
# A wasm build: release profile of the root Cargo.toml (opt-level 3, LTO,
# panic=abort, stripped), a 64 KiB stack, the bulk-memory feature (memcpy and
# memset become single `memory.copy`/`memory.fill` instructions instead of
# byte loops; wasmtime enables the feature by default), path prefixes remapped
# so the bytes do not depend on the checkout folder, then `wasm-opt -O3`
# (speed over size; bench/guest_fuel.py measures both). wasm-opt accepts
# fixed-width SIMD, which the host allows (docs/abi.md section 1): reversi's
# search routines enable it per function (sample_games/reversi/src/lanes.rs).
# Size: the cap is 400 KiB (docs/abi.md); most of a module is the SDK's and
# serde's shared code (tic-tac-toe is 346 KB), the sizes of each game and
# what was measured to cut them are in sdk/rust/README.md ("Module size").
# Toolchain: Debian's /usr/bin/cargo + rustc with its cargo registry when
# present (see scripts/install-toolchain.sh), else `cargo` from PATH.
set -euo pipefail
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

cargo_cmd=()
select_toolchain() {
    if [[ -x /usr/bin/cargo && -x /usr/bin/rustc && -d /usr/lib/rustlib/wasm32-unknown-unknown \
          && -d /usr/share/cargo/registry ]]; then
        # rustup's shims earlier on PATH would otherwise shadow Debian's rustc.
        export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
        cargo_cmd=(/usr/bin/cargo
            --config 'source.crates-io.replace-with="debian"'
            --config 'source.debian.directory="/usr/share/cargo/registry"')
    elif command -v cargo >/dev/null 2>&1; then
        cargo_cmd=(cargo)
    else
        echo "error: no Rust toolchain; run scripts/install-toolchain.sh" >&2
        exit 2
    fi
}

# "<dir name> <package name>" for each game crate, sorted by dir name.
game_crates() {
    local manifest
    for manifest in sample_games/*/Cargo.toml; do
        [[ -f $manifest ]] || continue
        python3 -c '
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print(sys.argv[2], tomllib.load(f)["package"]["name"])
' "$manifest" "$(basename "$(dirname "$manifest")")"
    done
}

build() {
    local out=${1:-$root/sample_games/dist}
    mkdir -p "$out"
    command -v wasm-opt >/dev/null || { echo "error: wasm-opt missing; run scripts/install-toolchain.sh" >&2; exit 2; }
    select_toolchain
    local registry=${CARGO_HOME:-$HOME/.cargo}/registry
    export RUSTFLAGS="-C link-arg=-zstack-size=65536 -C target-feature=+bulk-memory \
--remap-path-prefix=$root=/tablehost \
--remap-path-prefix=/usr/share/cargo/registry=/registry \
--remap-path-prefix=$registry=/cargo-registry"
    local target_dir=${CARGO_TARGET_DIR:-$root/target}
    local packages=() dir package
    while read -r dir package; do packages+=(-p "$package"); done < <(game_crates)
    (( ${#packages[@]} )) || { echo "no game crates under sample_games/" >&2; exit 1; }
    "${cargo_cmd[@]}" build --release --target wasm32-unknown-unknown \
        --target-dir "$target_dir" "${packages[@]}"
    while read -r dir package; do
        wasm-opt -O3 --enable-bulk-memory --enable-simd --strip-debug --strip-producers \
            "$target_dir/wasm32-unknown-unknown/release/${package//-/_}.wasm" -o "$out/$dir.wasm"
        echo "built $out/$dir.wasm ($(wc -c <"$out/$dir.wasm") bytes)"
    done < <(game_crates)
    (cd "$out" && sha256sum -- *.wasm >SHA256SUMS)
}

check() {
    local fresh status=0 dir package
    fresh=$(mktemp -d)
    # shellcheck disable=SC2064  # expand now: $fresh is local
    trap "rm -rf '$fresh'" EXIT
    build "$fresh" >/dev/null
    while read -r dir package; do
        if ! cmp -s "$fresh/$dir.wasm" "sample_games/dist/$dir.wasm"; then
            echo "differs: sample_games/dist/$dir.wasm (run make games and commit)" >&2
            status=1
        fi
    done < <(game_crates)
    if ! cmp -s "$fresh/SHA256SUMS" sample_games/dist/SHA256SUMS; then
        echo "differs: sample_games/dist/SHA256SUMS" >&2
        status=1
    fi
    (( status == 0 )) && echo "sample_games/dist matches a fresh build"
    return $status
}

run_tests() {
    select_toolchain
    "${cargo_cmd[@]}" test --workspace
}

case ${1:-build} in
    build) build "${2:-}" ;;
    check) check ;;
    test) run_tests ;;
    *) echo "usage: $0 [build [OUT_DIR] | check | test]" >&2; exit 2 ;;
esac
