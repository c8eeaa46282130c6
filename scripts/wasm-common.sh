# shellcheck shell=bash
# The one definition of how a game crate becomes a .wasm module, sourced by
# scripts/build-games.sh (the sample games) and scripts/build-game.sh (any crate);
# not meant to be run on its own. The caller sets `set -euo pipefail`.
#
# A wasm build: the release profile of the crate's workspace root (the repository's
# Cargo.toml for the sample games: opt-level 3, LTO, panic=abort, stripped), a 64 KiB
# shadow stack in linear memory (rustc keeps Rust's call stack there, apart from the
# wasm stack the host budgets: docs/abi.md section 17), the bulk-memory feature
# (memcpy and memset become single `memory.copy`/`memory.fill` instructions instead of
# byte loops; wasmtime enables the feature by default), path prefixes remapped so the
# bytes do not depend on the checkout folder, then `wasm-opt -O3` (speed over size;
# bench/guest_fuel.py measures both). wasm-opt accepts fixed-width SIMD, which the host
# allows (docs/abi.md section 1): reversi's search routines enable it per function
# (sample_games/reversi/src/lanes.rs).
# Toolchain: Debian's /usr/bin/cargo + rustc with its cargo registry when present (see
# scripts/install-toolchain.sh), else `cargo` from PATH if its rustc has the
# wasm32-unknown-unknown target.

wasm_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WASM_DEFAULT_STACK_BYTES=65536

wasm_fail() {
    echo "error: $*" >&2
    exit 2
}

# select_toolchain [native]: sets cargo_cmd (an array) to the cargo to build with, or exits
# naming what is missing; `native` (cargo test) does not need the wasm target.
cargo_cmd=()
select_toolchain() {
    local purpose=${1:-wasm} hint="run scripts/install-toolchain.sh (Debian's rustc, cargo, wasm32 std and crates)"
    if [[ -x /usr/bin/cargo && -x /usr/bin/rustc && -d /usr/lib/rustlib/wasm32-unknown-unknown \
          && -d /usr/share/cargo/registry ]]; then
        [[ -x /usr/bin/rust-lld ]] || wasm_fail "Debian's wasm linker /usr/bin/rust-lld (lld-14) is missing; $hint"
        # rustup's shims earlier on PATH would otherwise shadow Debian's rustc.
        export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
        cargo_cmd=(/usr/bin/cargo
            --config 'source.crates-io.replace-with="debian"'
            --config 'source.debian.directory="/usr/share/cargo/registry"')
    elif command -v cargo >/dev/null 2>&1; then
        local libdir
        libdir=$(rustc --print target-libdir --target wasm32-unknown-unknown 2>/dev/null) || libdir=""
        [[ $purpose == native || ( -n $libdir && -d $libdir ) ]] \
            || wasm_fail "$(command -v cargo) has no wasm32-unknown-unknown target (and Debian's toolchain is not installed); $hint"
        cargo_cmd=(cargo)
    else
        wasm_fail "no Rust toolchain; $hint"
    fi
}

require_wasm_opt() {
    command -v wasm-opt >/dev/null 2>&1 || wasm_fail "wasm-opt (binaryen) is missing; run scripts/install-toolchain.sh"
}

# wasm_rustflags STACK_BYTES [FROM=TO ...]: exports RUSTFLAGS for a guest build; each
# FROM=TO is one more path prefix to remap.
wasm_rustflags() {
    local stack=$1 remap
    shift
    local registry=${CARGO_HOME:-$HOME/.cargo}/registry
    RUSTFLAGS="-C link-arg=-zstack-size=$stack -C target-feature=+bulk-memory"
    RUSTFLAGS+=" --remap-path-prefix=$wasm_repo_root=/tablehost"
    RUSTFLAGS+=" --remap-path-prefix=/usr/share/cargo/registry=/registry"
    RUSTFLAGS+=" --remap-path-prefix=$registry=/cargo-registry"
    for remap in "$@"; do RUSTFLAGS+=" --remap-path-prefix=$remap"; done
    export RUSTFLAGS
}

# wasm_cargo_build CARGO_ARGS...: a release build for wasm32-unknown-unknown.
wasm_cargo_build() {
    "${cargo_cmd[@]}" build --release --target wasm32-unknown-unknown "$@"
}

# wasm_optimise IN.wasm OUT.wasm: wasm-opt as every committed module is built.
wasm_optimise() {
    wasm-opt -O3 --enable-bulk-memory --enable-simd --strip-debug --strip-producers "$1" -o "$2"
}
