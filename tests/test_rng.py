"""SplitMix64 (runtime/tablehost/rng.py) against published values and the SDK's shared vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablehost.rng import Rng

VECTORS = Path(__file__).resolve().parents[1] / "schemas" / "rng_vectors.json"
seeds = st.integers(min_value=0, max_value=2**64 - 1)


def test_seed_zero_matches_the_published_splitmix64_stream() -> None:
    rng = Rng(0)
    assert [rng.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_seed_1234567_matches_the_reference_implementation() -> None:
    # Vigna's splitmix64.c with x = 1234567, as quoted by several ports.
    rng = Rng(1234567)
    assert [rng.next_u64() for _ in range(5)] == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def test_shuffle_of_three_with_seed_zero_is_the_hand_worked_order() -> None:
    # i=2: below(3): threshold 1, 0xE220A8397B1DCDAF % 3 == 1 -> swap(2, 1) -> [0, 2, 1]
    # i=1: below(2): threshold 0, 0x6E789E6AA1B965F4 % 2 == 0 -> swap(1, 0) -> [2, 0, 1]
    items = [0, 1, 2]
    rng = Rng(0)
    rng.shuffle(items)
    assert items == [2, 0, 1]


def test_used_is_set_by_the_first_draw_only() -> None:
    rng = Rng(5)
    assert rng.used is False
    rng.shuffle([1])  # nothing to swap: no draw
    assert rng.used is False
    rng.roll(6)
    assert rng.used is True


def test_below_rejects_values_under_the_threshold() -> None:
    # n = 2**63 + 1 has threshold 2**63 - 1, so seed 0's first value (>= 2**63) is accepted
    # and seed 1's first value must be checked against it explicitly.
    n = 2**63 + 1
    threshold = 2**63 - 1
    for seed in range(50):
        raw = Rng(seed)
        expected = None
        draws = 0
        while expected is None:
            x = raw.next_u64()
            draws += 1
            if x >= threshold:
                expected = x % n
        rng = Rng(seed)
        assert rng.below(n) == expected
        follow = Rng(seed)
        for _ in range(draws):
            follow.next_u64()
        assert rng.next_u64() == follow.next_u64(), "below consumed a different number of draws"


@given(seeds, st.integers(min_value=1, max_value=2**64 - 1))
def test_below_stays_in_range(seed: int, n: int) -> None:
    assert 0 <= Rng(seed).below(n) < n


@given(seeds, st.integers(min_value=0, max_value=63))
def test_below_a_power_of_two_is_the_low_bits_of_one_draw(seed: int, bits: int) -> None:
    assert Rng(seed).below(2**bits) == Rng(seed).next_u64() % 2**bits


@given(seeds, st.integers(min_value=1, max_value=1000))
def test_roll_is_one_based(seed: int, sides: int) -> None:
    rng = Rng(seed)
    assert all(1 <= rng.roll(sides) <= sides for _ in range(5))


@given(seeds, st.lists(st.integers(), max_size=30))
def test_shuffle_is_a_permutation_and_deterministic(seed: int, items: list[int]) -> None:
    first, second = list(items), list(items)
    Rng(seed).shuffle(first)
    Rng(seed).shuffle(second)
    assert first == second
    assert sorted(first) == sorted(items)


@pytest.mark.parametrize("bad", [-1, 2**64, 1.0, "1", True])
def test_bad_seeds_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        Rng(bad)


@pytest.mark.parametrize("bad", [0, -3, 2**64])
def test_bad_bounds_are_refused(bad: int) -> None:
    with pytest.raises(ValueError):
        Rng(1).below(bad)


def _vectors() -> list[dict[str, Any]]:
    document = orjson.loads(VECTORS.read_bytes())  # orjson keeps u64 integers exact
    vectors: list[dict[str, Any]] = document["vectors"]
    return vectors


@pytest.mark.skipif(not VECTORS.exists(), reason="schemas/rng_vectors.json not published yet")
def test_shared_vectors_from_the_sdk() -> None:
    vectors = _vectors()
    assert {v["seed"] for v in vectors} >= {0, 2**64 - 1}, (
        "the vectors should cover both ends of the seed range"
    )
    for vector in vectors:
        seed = vector["seed"]
        rng = Rng(seed)
        assert [rng.next_u64() for _ in vector["next_u64"]] == vector["next_u64"], seed
        for case in vector["below"]:
            rng = Rng(seed)
            assert [rng.below(case["n"]) for _ in case["values"]] == case["values"], (seed, case["n"])
        rng = Rng(seed)
        assert [rng.roll(6) for _ in vector["roll6"]] == vector["roll6"], seed
        items = list(range(10))
        Rng(seed).shuffle(items)
        assert items == vector["shuffle10"], seed
