"""Values in messages are shown as JSON, bounded (tablehost.shown)."""

from __future__ import annotations

from typing import Any

import pytest

from tablehost.shown import shown_json, shown_value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        (True, "true"),
        (7, "7"),
        ("7", '"7"'),
        (2**100, str(2**100)),  # past 64 bits: still its digits
        (2**200, "an int over 128 bits"),
        (1.5, "1.5"),
        (float("nan"), "nan"),
        ('say "hi"', '"say \\"hi\\""'),
        ("x" * 100, '"' + "x" * 40 + '"...'),
        ([1, 2], "a list"),
        ({"a": 1}, "a dict"),
    ],
)
def test_a_value_is_shown_as_json(value: Any, shown: str) -> None:
    assert shown_value(value) == shown


def test_an_object_is_shown_as_compact_json_cut_short() -> None:
    assert shown_json({"type": "button_click", "button": {"disabled": False}}) == (
        '{"type":"button_click","button":{"disabled":false}}'
    )
    assert shown_json(["y" * 500], limit=10) == '["yyyyyyyy...'
    nested: list[Any] = []
    for _ in range(1000):
        nested = [nested]
    assert shown_json(nested) == "a list" and shown_json({1: 2}) == "a dict" and shown_json(2**70) == str(2**70)
