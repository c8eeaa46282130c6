#!/bin/sh
# Install what `make games` needs to build the sample games to wasm, on a
# fresh Debian/Ubuntu machine, without crates.io (see ../shared MACHINE-NOTES):
#   rustc 1.63 + cargo + the wasm32-unknown-unknown std, serde, serde_derive,
#   serde_json from Debian's cargo registry, the wasm linker (rust-lld, a link
#   to lld-14: Debian's wasm32 std only *recommends* lld-14, and this script
#   installs with --no-install-recommends, so it is named here explicitly) and
#   binaryen's wasm-opt.
# Idempotent: installs only what is missing. A rustup toolchain that already
# has the wasm32-unknown-unknown target (and crates.io access) is accepted in
# place of the Debian Rust packages; wasm-opt is needed either way.
#
# After installing, every piece the build needs is checked again; the script
# exits 1 naming each missing piece instead of saying "toolchain ready".
#
# Note: the committed .wasm files are built with Debian's rustc 1.63 and
# binaryen 108; another compiler gives working modules with other bytes, so
# `make games-check` only passes with the Debian toolchain.
set -eu

REGISTRY=/usr/share/cargo/registry

# Each check prints nothing and succeeds when its piece is present.
have_debian_rustc() { [ -x /usr/bin/rustc ]; }
have_debian_cargo() { [ -x /usr/bin/cargo ]; }
have_debian_wasm_std() { [ -d /usr/lib/rustlib/wasm32-unknown-unknown/lib ]; }
have_crate() { ls -d "$REGISTRY/$1"-1* >/dev/null 2>&1; }
# rust-lld is a symlink shipped by rustc; `-x` follows it, so a dangling link
# (lld-14 missing) fails here.
have_debian_linker() { [ -x /usr/bin/rust-lld ] && [ -x /usr/bin/lld-14 ]; }
have_wasm_opt() { command -v wasm-opt >/dev/null 2>&1; }

debian_rust_ok() {
    have_debian_rustc && have_debian_cargo && have_debian_wasm_std \
        && have_crate serde && have_crate serde_derive && have_crate serde_json \
        && have_debian_linker
}

rustup_wasm_ok() {
    command -v rustup >/dev/null 2>&1 \
        && rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown
}

# The Debian packages that provide what is missing (empty when nothing is).
debian_packages_missing() {
    pkgs=""
    have_debian_rustc || pkgs="$pkgs rustc"
    have_debian_cargo || pkgs="$pkgs cargo"
    have_debian_wasm_std || pkgs="$pkgs libstd-rust-dev-wasm32"
    have_crate serde || pkgs="$pkgs librust-serde-dev"
    have_crate serde_derive || pkgs="$pkgs librust-serde-derive-dev"
    have_crate serde_json || pkgs="$pkgs librust-serde-json-dev"
    have_debian_linker || pkgs="$pkgs lld-14"
    echo "$pkgs"
}

# Names every missing piece on stderr; fails when there is one.
verify() {
    absent=""
    if ! rustup_wasm_ok; then
        have_debian_rustc || absent="$absent rustc(/usr/bin/rustc)"
        have_debian_cargo || absent="$absent cargo(/usr/bin/cargo)"
        have_debian_wasm_std || absent="$absent wasm32-std(/usr/lib/rustlib/wasm32-unknown-unknown)"
        for crate in serde serde_derive serde_json; do
            have_crate "$crate" || absent="$absent $crate($REGISTRY/$crate-1*)"
        done
        have_debian_linker || absent="$absent rust-lld(/usr/bin/rust-lld->lld-14)"
    fi
    have_wasm_opt || absent="$absent wasm-opt"
    if [ -n "$absent" ]; then
        echo "error: the toolchain is incomplete; missing:$absent" >&2
        return 1
    fi
}

missing=""
if debian_rust_ok; then
    echo "toolchain: Debian rustc $(/usr/bin/rustc --version | cut -d' ' -f2) with wasm32 std, serde and rust-lld"
elif rustup_wasm_ok; then
    echo "toolchain: rustup with wasm32-unknown-unknown (crates come from crates.io)"
else
    missing=$(debian_packages_missing)
fi

if have_wasm_opt; then
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

verify || exit 1
echo "toolchain ready"
