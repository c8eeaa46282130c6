#!/bin/sh
# Install what `make games` needs to build the sample games to wasm, on a
# fresh Debian/Ubuntu machine, without crates.io (see ../shared MACHINE-NOTES):
#   rustc 1.63 + cargo + the wasm32-unknown-unknown std, serde, serde_derive,
#   serde_json from Debian's cargo registry, and binaryen's wasm-opt.
# Idempotent: installs only what is missing. A rustup toolchain that already
# has the wasm32-unknown-unknown target (and crates.io access) is accepted in
# place of the Debian Rust packages; wasm-opt is needed either way.
#
# Note: the committed .wasm files are built with Debian's rustc 1.63 and
# binaryen 108; another compiler gives working modules with other bytes, so
# `make games-check` only passes with the Debian toolchain.
set -eu

missing=""

debian_rust_ok() {
    [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] \
        && [ -d /usr/lib/rustlib/wasm32-unknown-unknown ] \
        && ls -d /usr/share/cargo/registry/serde-1* /usr/share/cargo/registry/serde_derive-1* \
               /usr/share/cargo/registry/serde_json-1* >/dev/null 2>&1
}

rustup_wasm_ok() {
    command -v rustup >/dev/null 2>&1 \
        && rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown
}

if debian_rust_ok; then
    echo "toolchain: Debian rustc $(/usr/bin/rustc --version | cut -d' ' -f2) with wasm32 std and serde"
elif rustup_wasm_ok; then
    echo "toolchain: rustup with wasm32-unknown-unknown (crates come from crates.io)"
else
    missing="rustc cargo libstd-rust-dev-wasm32 librust-serde-dev librust-serde-derive-dev librust-serde-json-dev"
fi

if command -v wasm-opt >/dev/null 2>&1; then
    echo "wasm-opt: $(wasm-opt --version)"
else
    missing="$missing binaryen"
fi

if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=""; fi
    $sudo apt-get update
    # shellcheck disable=SC2086
    $sudo apt-get install -y --no-install-recommends $missing
fi
echo "toolchain ready"
