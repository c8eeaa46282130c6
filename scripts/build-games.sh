#!/usr/bin/env bash
# Build, check or test the sample games (every sample_games/*/Cargo.toml).
#
#   scripts/build-games.sh build [OUT_DIR]  release wasm of each game to
#                                           OUT_DIR/<dir name>.wasm (default
#                                           sample_games/dist) + SHA256SUMS
#   scripts/build-games.sh check            build into a temporary dir; exit 1
#                                           when a committed .wasm or SHA256SUMS
#                                           differs from the fresh build
#   scripts/build-games.sh test             cargo test for the whole workspace, then
#                                           examples
#   scripts/build-games.sh examples         cargo test for each SDK example
#                                           (sdk/rust/examples/*, workspaces of their own)
#
# How a game becomes a module (profile, flags, path remapping, wasm-opt, toolchain) is
# in scripts/wasm-common.sh, shared with scripts/build-game.sh (one crate, yours).
# Size: the host accepts modules up to 16 MiB (Limits.module_bytes, docs/abi.md
# section 17); the sample games keep to 400 KiB, a target of this repository
# (tests/test_schemas.py). Most of a module is the SDK's and serde's shared code
# (tic-tac-toe is 346 KB); the sizes of each game and what was measured to cut them
# are in sdk/rust/README.md ("Module size").
set -euo pipefail
export LC_ALL=C

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# shellcheck source=scripts/wasm-common.sh
source "$root/scripts/wasm-common.sh"

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
    require_wasm_opt
    select_toolchain
    wasm_rustflags "$WASM_DEFAULT_STACK_BYTES"
    local target_dir=${CARGO_TARGET_DIR:-$root/target}
    local packages=() dir package
    while read -r dir package; do packages+=(-p "$package"); done < <(game_crates)
    (( ${#packages[@]} )) || { echo "no game crates under sample_games/" >&2; exit 1; }
    wasm_cargo_build --target-dir "$target_dir" "${packages[@]}"
    while read -r dir package; do
        wasm_optimise "$target_dir/wasm32-unknown-unknown/release/${package//-/_}.wasm" "$out/$dir.wasm"
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
    select_toolchain native
    "${cargo_cmd[@]}" test --workspace
    test_examples
}

# The SDK's examples (sdk/rust/README.md, "Write your own game") are workspaces of their own,
# so `cargo test --workspace` skips them; they are tested in the same target folder, where
# serde is already built (about 7 s the first time, 0.1 s after).
test_examples() {
    local manifest
    select_toolchain native
    for manifest in sdk/rust/examples/*/Cargo.toml; do
        [[ -f $manifest ]] || continue
        "${cargo_cmd[@]}" test --manifest-path "$manifest" --target-dir "${CARGO_TARGET_DIR:-$root/target}"
    done
}

case ${1:-build} in
    build) build "${2:-}" ;;
    check) check ;;
    test) run_tests ;;
    examples) test_examples ;;
    *) echo "usage: $0 [build [OUT_DIR] | check | test | examples]" >&2; exit 2 ;;
esac
