"""``scripts/build-game.sh``: a game crate outside the repository builds to a module that loads and
passes ``tablehost check`` (sdk/rust/README.md, "Write your own game").

The crate is the SDK's example (``sdk/rust/examples/nim``) copied into a temporary folder, its
manifest changed as the README tells an author: the SDK path made absolute, the empty
``[workspace]`` table dropped. Building needs the wasm toolchain (``scripts/install-toolchain.sh``);
without it the tests skip, except under CI (``CI`` set), which installs it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest

from tablehost.cli import main
from tablehost.module import load_module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build-game.sh"
EXAMPLE = ROOT / "sdk" / "rust" / "examples" / "nim"


def author_crate(folder: Path, *, crate_type: str = '["cdylib", "rlib"]') -> Path:
    """The example crate as an author outside the repository would hold it, in ``folder``."""
    manifest = (EXAMPLE / "Cargo.toml").read_text()
    manifest = manifest.replace('path = "../.."', f'path = "{ROOT / "sdk" / "rust"}"')
    manifest = manifest.replace("\n[workspace]\n", "\n").replace('["cdylib", "rlib"]', crate_type)
    assert "\n[workspace]\n" not in manifest and str(ROOT) in manifest
    crate = folder / "nim"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(manifest)
    (crate / "src" / "lib.rs").write_text((EXAMPLE / "src" / "lib.rs").read_text())
    return crate


def build(crate: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the script on ``crate``; skip (fail under CI) when the toolchain is missing."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(crate.parent / "target")}
    run = subprocess.run(
        [str(SCRIPT), str(crate), *args], capture_output=True, text=True, env=env, timeout=600, check=False
    )
    if run.returncode == 2 and "scripts/install-toolchain.sh" in run.stderr:
        if os.environ.get("CI"):
            pytest.fail(f"CI must build guests: {run.stderr.strip()}")
        pytest.skip(run.stderr.strip())
    return run


@pytest.mark.slow
def test_a_crate_outside_the_repository_builds_to_a_module_that_passes_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    crate = author_crate(tmp_path)
    out = tmp_path / "dist" / "nim.wasm"

    run = build(crate, str(out))

    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == f"built {out} ({out.stat().st_size} bytes)"
    assert "warning" not in run.stderr  # the example's manifest has the release profile
    data = out.read_bytes()
    assert str(tmp_path).encode() not in data and str(ROOT).encode() not in data  # paths remapped
    module = load_module(data, name="nim", cache_dir=tmp_path / "cache")
    assert module.info.imports == [] and "tablehost_call" in module.info.exports

    monkeypatch.setenv("TABLEHOST_CACHE_DIR", str(tmp_path / "cache"))
    capsys.readouterr()  # what loading logged
    assert main(["inspect", str(out), "--json"]) == 0
    metadata = orjson.loads(capsys.readouterr().out)["metadata"]
    assert (metadata["min_players"], metadata["max_players"]) == (2, 2)
    assert [option["name"] for option in metadata["options"]] == ["stones"]
    assert main(["check", str(out), "--games", "4", "--seed", "5"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("OK")


def test_a_crate_without_a_cdylib_is_refused_by_name(tmp_path: Path) -> None:
    crate = author_crate(tmp_path, crate_type='["rlib"]')

    run = build(crate)

    assert run.returncode == 2
    assert "builds no cdylib" in run.stderr and 'crate-type = ["cdylib", "rlib"]' in run.stderr


def test_a_folder_without_a_manifest_is_refused_with_the_usage(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )

    assert run.returncode == 2
    assert f"no Cargo.toml in {tmp_path}" in run.stderr and "CRATE_DIR [OUT.wasm]" in run.stderr


@pytest.mark.slow
def test_rust_tests_include_the_sdk_example() -> None:
    """``make rust-test`` (``scripts/build-games.sh test``) ends with ``examples``: the example
    is a workspace of its own, which ``cargo test --workspace`` never ran. Built in the target
    folder ``make rust-test`` uses, so after it this takes about 0.1 s (24 s from nothing)."""
    run = subprocess.run(
        [str(ROOT / "scripts" / "build-games.sh"), "examples"], capture_output=True, text=True, timeout=600,
        check=False,
    )
    if run.returncode == 2 and "scripts/install-toolchain.sh" in run.stderr:
        if os.environ.get("CI"):
            pytest.fail(f"CI must test the SDK example: {run.stderr.strip()}")
        pytest.skip(run.stderr.strip())

    assert run.returncode == 0, run.stderr[-3000:]
    assert "Running unittests src/lib.rs" in run.stderr and "/nim-" in run.stderr
    assert "test tests::taking_the_last_stone_wins ... ok" in run.stdout
