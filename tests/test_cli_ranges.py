"""Every numeric option of the commands has an upper bound (tablehost.cli_ranges): a huge value is
bad input (exit 2) naming the option and its range, never a traceback, a wrapped number or an
absurd allocation (ten to the twenty games, a hundred thousand processes).

The cases run through ``tablehost.cli.main`` in one child process with a timeout, so a bound that
went missing fails here instead of starting a server or a simulation that never ends.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from test_e2e_server import _env

DIST = Path(__file__).resolve().parent.parent / "sample_games" / "dist"
TTT = str(DIST / "tic_tac_toe.wasm")
BIG = "99999999999999999999999"
pytestmark = pytest.mark.skipif(not (DIST / "tic_tac_toe.wasm").exists(), reason="run `make games`")

CHILD = """
import contextlib, io, os, sys
import orjson
from tablehost.cli import main
results = []
for argv, environ in orjson.loads(sys.stdin.buffer.read()):
    saved = dict(os.environ)
    os.environ.update(environ)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    os.environ.clear()
    os.environ.update(saved)
    results.append([code, err.getvalue(), out.getvalue()])
sys.stdout.buffer.write(orjson.dumps(results))
"""

BUDGETS = [
    ("--wall-ms", "1 to 3600000 ms"),
    ("--fuel", "1 to 9223372036854775807 fuel"),
    ("--memory-mib", "1 to 4096 MiB"),
    ("--stack-kib", "1 to 2048 KiB"),
    ("--guest-slots", "1 to 1024"),
]

CASES: list[tuple[list[str], dict[str, str], str]] = [
    *[
        ([command, TTT, flag, BIG], {}, f"{flag} must be {bounds}, got {BIG}")
        for command in ("play", "simulate", "check", "inspect")
        for flag, bounds in BUDGETS
    ],
    (["inspect", TTT, "--wall-factor", BIG], {}, "--wall-factor must be 1 to 1000"),
    (["play", TTT], {"TABLEHOST_MEMORY_MIB": "5000"}, "TABLEHOST_MEMORY_MIB must be 1 to 4096 MiB, got 5000"),
    (["check", TTT], {"TABLEHOST_GUEST_SLOTS": BIG}, f"TABLEHOST_GUEST_SLOTS must be 1 to 1024, got {BIG}"),
    (["play", TTT, "--max-plies", BIG], {}, "--max-plies must be 1 to 1000000"),
    (["simulate", TTT, "--games", BIG], {}, "--games must be 1 to 10000000"),
    (["simulate", TTT, "--workers", "100000"], {}, "--workers must be 1 to 64"),
    (["simulate", TTT, "--batch", BIG], {}, "--batch must be 1 to 4096"),
    (["simulate", TTT, "--max-plies", BIG], {}, "--max-plies must be 1 to 1000000"),
    (["check", TTT, "--games", BIG], {}, "--games must be 1 to 100000"),
    (["check", TTT, "--max-plies", BIG], {}, "--max-plies must be 1 to 1000000"),
    *[
        (["serve", "--listen", "127.0.0.1:0", "--data", "DATA", flag, value], {}, message)
        for flag, value, message in [
            ("--max-workers", BIG, "--max-workers must be 1 to 4096"),
            ("--processes", "100000", "--processes must be 1 to 64"),
            ("--rate-limit", "nan", "--rate-limit must be 0 to 1000000 requests/s, got nan"),
            ("--rate-limit", "inf", "--rate-limit must be 0 to 1000000 requests/s, got inf"),
            ("--rate-limit", "1e300", "--rate-limit must be 0 to 1000000 requests/s"),
            ("--rate-burst", BIG, "--rate-burst must be 1 to 1000000"),
            ("--auth-failure-rate", "-1", "--auth-failure-rate must be 0 to 1000000 per s, got -1.0"),
            ("--auth-failure-rate", "nan", "--auth-failure-rate must be 0 to 1000000 per s, got nan (not a finite"),
            ("--auth-failure-burst", "0", "--auth-failure-burst must be 1 to 1000000, got 0"),
            ("--watches-per-token", BIG, "--watches-per-token must be 1 to 1024"),
            ("--watches-per-token", "0", "--watches-per-token must be 1 to 1024"),
            ("--check-uploads", BIG, "--check-uploads must be 0 to 100000"),
            ("--switch-interval-ms", "0", "--switch-interval-ms must be 0.05 to 100 ms, got 0"),
            ("--switch-interval-ms", "nan", "--switch-interval-ms must be 0.05 to 100 ms, got nan"),
            ("--switch-interval-ms", BIG, "--switch-interval-ms must be 0.05 to 100 ms"),
            # "-inf", "-nan", "-1e3" were read as options: "expected one argument"
            ("--switch-interval-ms", "-inf", "--switch-interval-ms must be 0.05 to 100 ms, got -inf (not a finite"),
            ("--switch-interval-ms", "inf", "--switch-interval-ms must be 0.05 to 100 ms, got inf (not a finite"),
            ("--switch-interval-ms", "-nan", "--switch-interval-ms must be 0.05 to 100 ms, got nan (not a finite"),
            ("--rate-limit", "-Infinity", "--rate-limit must be 0 to 1000000 requests/s, got -inf (not a finite"),
            ("--rate-limit", "-1e3", "--rate-limit must be 0 to 1000000 requests/s, got -1000.0"),
            ("--evict-after", "-inf", "--evict-after must be 0 to 2592000 s, got -inf (not a finite number)"),
            ("--evict-after", "nan", "--evict-after must be 0 to 2592000 s, got nan (not a finite number)"),
            ("--check-players", "100000", "--check-players must be 1 to 64"),
            (
                "--metrics-port",
                "99999",
                "--metrics-port must be 0 to 65535",
            ),  # was an OverflowError traceback
            ("--memory-mib", BIG, "--memory-mib must be 1 to 4096 MiB"),
            ("--guest-slots", BIG, "--guest-slots must be 1 to 1024"),
            ("--wall-factor", BIG, "--wall-factor must be 1 to 1000"),
        ]
    ],
    # Checked before any child process starts; process i serves metrics on PORT+i.
    (
        [
            "serve",
            "--processes",
            "2",
            "--store",
            "postgresql://nobody@127.0.0.1:1/x",
            "--data",
            "DATA",
            "--memory-mib",
            BIG,
        ],
        {},
        "--memory-mib must be 1 to 4096 MiB",
    ),
    (
        [
            "serve",
            "--processes",
            "2",
            "--store",
            "postgresql://nobody@127.0.0.1:1/x",
            "--data",
            "DATA",
            "--metrics-port",
            "65535",
        ],
        {},
        "--metrics-port must be 0 to 65534",
    ),
    *[
        (
            ["bots", "--match", "m-1", "--tokens", "t", "--address", "127.0.0.1:1", "--timeout", value],
            {},
            f"--timeout must be 0 to 604800 s, got {value}",
        )
        for value in ("inf", "nan", "1e+300")
    ],
    (
        ["bots", "--match", "m-1", "--tokens", "t", "--address", "127.0.0.1:1", "--timeout", "-inf"],
        {},
        "--timeout must be a positive number of seconds",  # was "expected one argument"
    ),
    # Seeds are 64-bit everywhere (bots and demo took any number and cut it silently).
    (
        ["bots", "--match", "m-1", "--tokens", "t", "--address", "127.0.0.1:1", "--seed", "-1"],
        {},
        "--seed must be 0 to 18446744073709551615, got -1",
    ),
    (["demo", "--seed", str(2**64)], {}, f"--seed must be 0 to 18446744073709551615, got {2**64}"),
    # printed a link to port 99999 (or to "http://garbage/") and exited 0
    (["web", "--http", "127.0.0.1:99999", "--no-open", "--data", "DATA"], {}, "the port must be 1 to 65535, got 99999"),
    (["web", "--http", "garbage", "--no-open", "--data", "DATA"], {}, "is not host:port"),
    # protobuf's refusal was "Value out of range: ..." with no option named
    (
        ["join", "m-1", "--name", "z", "--seat", BIG, "--address", "127.0.0.1:1", "--token", "t"],
        {},
        f"--seat must be 1 to 64, got {BIG}",
    ),
]


def run_in_child(cases: list[tuple[list[str], dict[str, str]]]) -> list[tuple[int, str, str]]:
    """Run each ``(argv, environment)`` through ``cli.main`` in one child: ``(status, stderr, stdout)``."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=orjson.dumps(cases),
        capture_output=True,
        env=_env(),
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    return [(code, err, out) for code, err, out in orjson.loads(result.stdout)]


def test_a_huge_number_is_refused_with_the_range(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    cases = [([data if arg == "DATA" else arg for arg in argv], environ) for argv, environ, _ in CASES]
    for (argv, _), (code, err, _), (_, _, message) in zip(cases, run_in_child(cases), CASES, strict=True):
        assert (code, message in err, "Traceback" in err) == (2, True, False), (argv, err)
    assert not Path(data).exists(), "a refused serve created its data directory"


def test_the_largest_values_are_taken(tmp_path: Path) -> None:
    argv = [
        "inspect",
        TTT,
        "--json",
        "--memory-mib",
        "4096",
        "--wall-ms",
        "3600000",
        "--wall-factor",
        "1000",
        "--stack-kib",
        "2048",
        "--guest-slots",
        "1024",
        "--fuel",
        str(2**63 - 1),
    ]
    [(code, err, out)] = run_in_child([(argv, {"TABLEHOST_CACHE_DIR": str(tmp_path / "cache")})])
    assert (code, err) == (0, "")
    budgets = orjson.loads(out)["budgets"]
    assert (budgets["memory_bytes"], budgets["wall_ms"], budgets["guest_slots"]) == (
        4096 * 2**20,
        3_600_000,
        1024,
    )
    assert (budgets["replay_wall_factor"], budgets["stack_bytes"]) == (1000, 2 * 2**20)


def test_the_largest_fuel_is_not_cut_when_a_call_is_scaled() -> None:
    # A playout call of one game gets 20 move budgets: 2**62 * 20 is 0 modulo 2**64, and the call
    # ran out of fuel at once. A scaled budget is capped at wasmtime's largest instead.
    argv = [
        "simulate",
        TTT,
        "--in-guest",
        "--games",
        "2",
        "--batch",
        "1",
        "--seed",
        "1",
        "--json",
        "--fuel",
        str(2**62),
    ]
    [(code, err, out)] = run_in_child([(argv, {})])
    assert (code, orjson.loads(out)["failures"]) == (0, []), err


def test_a_value_that_is_not_a_number_is_one_line_naming_the_option() -> None:
    # argparse printed the command's whole usage (5 to 10 lines) above its error.
    cases = [
        (["play", TTT, "--seed", "abc"], "--seed"),
        (["play", TTT, "--fuel", "1e9"], "--fuel"),
        (["inspect", TTT, "--wall-factor", "nan"], "--wall-factor"),
        (["simulate", TTT, "--games", "ten"], "--games"),
        (["serve", "--processes", "two"], "--processes"),
        (["create", "mod", "--players", "-"], "--players"),
    ]
    for (argv, option), (code, err, _) in zip(
        cases, run_in_child([(argv, {}) for argv, _ in cases]), strict=True
    ):
        command = f"tablehost {argv[0]}"
        assert code == 2 and len(err.splitlines()) == 1, (argv, err)
        assert err.startswith(f"{command}: argument {option}") and f"{command} --help" in err, (argv, err)


DOMINOES = str(DIST / "dominoes.wasm")
TILES = ["play", DOMINOES, "--players", "2", "--seed", "1", "--quiet", "--option"]


def test_numbers_are_ascii_digits_and_nothing_else(tmp_path: Path) -> None:
    # Python's int() reads "0_2", "+2" and " 2": they were taken (--option tiles_per_hand=0_7 as 7).
    cases: list[tuple[list[str], dict[str, str], str]] = [
        (["play", TTT, "--players", "0_2"], {}, "argument --players: invalid int value: '0_2'"),
        (["play", TTT, "--players", "+2"], {}, "argument --players: invalid int value: '+2'"),
        (["play", TTT, "--players", " 2"], {}, "argument --players: invalid int value: ' 2'"),
        (["create", "m", "--players", "0_2", "--token", "t"], {}, "argument --players: invalid int value: '0_2'"),
        (["simulate", TTT, "--seed", "1_000"], {}, "argument --seed: invalid int value: '1_000'"),
        (["simulate", TTT, "--games", "1_0"], {}, "argument --games: invalid int value: '1_0'"),
        (["check", TTT, "--games", "٣"], {}, "argument --games: invalid int value: '٣'"),
        (
            ["serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "data"), "--switch-interval-ms", "1_0"],
            {},
            "argument --switch-interval-ms: invalid float value: '1_0'",
        ),
        ([*TILES, "tiles_per_hand=0_7"], {}, 'option \'tiles_per_hand\' must be an integer 0..7, not "0_7"'),
        ([*TILES, "tiles_per_hand=+7"], {}, 'option \'tiles_per_hand\' must be an integer 0..7, not "+7"'),
        ([*TILES, "tiles_per_hand= 7"], {}, 'option \'tiles_per_hand\' must be an integer 0..7, not " 7"'),
        ([*TILES, "tiles_per_hand=-1"], {}, "option 'tiles_per_hand' must be an integer 0..7, not -1"),  # a number
        (["play", TTT], {"TABLEHOST_FUEL": "1_000"}, "TABLEHOST_FUEL must be an integer, got '1_000'"),
        (["play", TTT], {"TABLEHOST_GUEST_SLOTS": "+2"}, "TABLEHOST_GUEST_SLOTS must be an integer in ASCII digits"),
    ]
    for (argv, environ, message), (code, err, _) in zip(
        cases, run_in_child([(argv, environ) for argv, environ, _ in cases]), strict=True
    ):
        assert (code, message in err, "Traceback" in err) == (2, True, False), (argv, err)


def test_the_strict_parsers_read_what_they_should() -> None:
    from tablehost.cli_ranges import parse_decimal, parse_int

    assert [parse_int(t) for t in ("0", "-5", "007", str(2**64))] == [0, -5, 7, 2**64]
    assert [parse_decimal(t) for t in ("1.5", "-.5", "1e3", "2.", "-1E-2")] == [1.5, -0.5, 1000.0, 2.0, -0.01]
    assert [str(parse_decimal(t)) for t in ("inf", "-infinity", "nan", "NaN")] == ["inf", "-inf", "nan", "nan"]
    for bad in ("", "-", "1_0", "+1", " 1", "1 ", "١", "1.5", "0x10", "1e3"):
        with pytest.raises(ValueError):
            parse_int(bad)
    for bad in ("", ".", "1_0.5", "+1.5", " 1.5", "1.5\n", "٣.٥", "e3", "infinite"):
        with pytest.raises(ValueError):
            parse_decimal(bad)
