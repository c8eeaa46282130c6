#!/usr/bin/env bash
# Build one game crate to an optimised module, as the sample games are built
# (scripts/wasm-common.sh: release profile, flags, toolchain, path remapping, wasm-opt).
#
#   scripts/build-game.sh CRATE_DIR [OUT.wasm]
#
# CRATE_DIR holds the game's Cargo.toml: a `cdylib` library depending on tablehost-sdk
# (a path dependency on this repository's sdk/rust). OUT.wasm defaults to
# <library name>.wasm in the current folder. The release profile is read from the
# crate's workspace root, which is the crate itself outside this repository: give it the
# [profile.release] of sdk/rust/README.md ("Write your own game"). STACK_BYTES (default
# 65536) sizes Rust's shadow stack in linear memory; deep recursion needs more (same
# section). Exit status: 0 built, 2 bad arguments or a missing toolchain, else cargo's.
set -euo pipefail
export LC_ALL=C

usage="usage: $0 CRATE_DIR [OUT.wasm]"
(( $# == 1 || $# == 2 )) || { echo "$usage" >&2; exit 2; }
[[ -f $1/Cargo.toml ]] || { echo "error: no Cargo.toml in $1; $usage" >&2; exit 2; }
crate=$(cd "$1" && pwd)

# shellcheck source=scripts/wasm-common.sh
source "$(dirname "$0")/wasm-common.sh"

stack=${STACK_BYTES:-$WASM_DEFAULT_STACK_BYTES}
[[ $stack =~ ^[0-9]+$ ]] && (( stack >= 16 && stack % 16 == 0 )) \
    || wasm_fail "STACK_BYTES must be a positive multiple of 16, got '$stack'"

require_wasm_opt
select_toolchain

# The crate's library name, its workspace root and target folder, from cargo itself.
info=$("${cargo_cmd[@]}" metadata --no-deps --format-version 1 --manifest-path "$crate/Cargo.toml" \
    | python3 -c '
import json, os, sys, tomllib
meta, manifest = json.load(sys.stdin), os.path.join(sys.argv[1], "Cargo.toml")
package = next((p for p in meta["packages"] if os.path.samefile(p["manifest_path"], manifest)), None)
if package is None:
    sys.exit(f"error: {manifest} is no package (a workspace of its own?); name the game crate")
libs = [t for t in package["targets"] if "cdylib" in t["crate_types"]]
if not libs:
    sys.exit(f"error: {manifest} builds no cdylib; add [lib] crate-type = [\"cdylib\", \"rlib\"]")
root = meta["workspace_root"]
with open(os.path.join(root, "Cargo.toml"), "rb") as f:
    if "release" not in tomllib.load(f).get("profile", {}):
        print(f"warning: no [profile.release] in {root}/Cargo.toml: cargo'"'"'s defaults give a larger,"
              " slower module (see sdk/rust/README.md, \"Write your own game\")", file=sys.stderr)
print(libs[0]["name"].replace("-", "_"), root, meta["target_directory"], sep="\n")
' "$crate") || exit 2
{ read -r lib; read -r workspace; read -r target_dir; } <<<"$info"
out=${2:-$PWD/$lib.wasm}

remaps=()
# The sample games' own sources are already named from the repository root; another
# workspace's are named from its root, so its folder stays out of the module too.
[[ $workspace == "$wasm_repo_root" ]] || remaps+=("$workspace=/game")
wasm_rustflags "$stack" "${remaps[@]}"

wasm_cargo_build --manifest-path "$crate/Cargo.toml" --target-dir "$target_dir"
mkdir -p "$(dirname "$out")"
wasm_optimise "$target_dir/wasm32-unknown-unknown/release/$lib.wasm" "$out"
echo "built $out ($(wc -c <"$out") bytes)"
