"""A seat's view made into a state a search can run the rules on (docs/abi.md "search").

:func:`tablehost.view.view_state` groups the pieces of a ``collection`` space that the viewer may
not see: one entry ``{"public_kind", "public_state", "owner", "count"}`` per group. The rules know
no groups, so before a ``search`` call the host expands each group into ``count`` copies of its
public part (a hidden piece shows only its public side, as in an ``ordered`` space) and keeps,
per expanded space, the view index each copy came from; the guest answers in the expanded
state's addresses and :meth:`ExpandedView.to_view_action` names that action in view addresses
again (a click on any copy of a group is a click on the group), for the host to check against
what it offers the seat.

Nothing here adds information: the expanded state is a function of the view alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tablehost.types import ActionDict, StateDict

MAX_EXPANDED_PIECES = 100_000
"""Most pieces a view may expand to: a guard against a count that would send the guest a huge
state (real tables hold a few hundred)."""


@dataclass(frozen=True)
class ExpandedView:
    """A view with its groups expanded.

    Attributes:
        state: the view as a plain state (no ``count``); new lists and piece dicts, nested values
            shared with the view (it is only serialized for the guest).
        view_index: space id -> the view index of each piece of the expanded space, for the
            spaces that had groups.
    """

    state: StateDict
    view_index: dict[str, list[int]]

    def to_view_action(self, action: ActionDict) -> ActionDict:
        """``action`` (addressed in :attr:`state`) in view addresses.

        A ``piece_click`` on an expanded space names the view index its piece came from; any
        other action, or an index past the expanded space (which the host then finds is not
        offered), is returned unchanged.
        """
        if action.get("type") != "piece_click":
            return action
        space_id, index = action.get("space_id"), action.get("index")
        if not isinstance(space_id, str) or type(index) is not int:
            return action
        mapping = self.view_index.get(space_id)
        if mapping is None or not 0 <= index < len(mapping):
            return action
        return {**action, "index": mapping[index]}


def expand_view(view: dict[str, Any]) -> ExpandedView:
    """Expand every hidden group of ``view`` (``view_state``'s output) into copies of its public part.

    Args:
        view: a seat's view; not modified.

    Returns:
        The expanded view.

    Raises:
        ValueError: a ``count`` that is not an integer >= 1, or more than
            :data:`MAX_EXPANDED_PIECES` pieces in all.
    """
    total = 0
    spaces = []
    view_index: dict[str, list[int]] = {}
    for space in view.get("spaces") or []:
        pieces = space["pieces"]
        total += len(pieces)
        if not any("count" in piece for piece in pieces):
            spaces.append(space)
            continue
        expanded: list[dict[str, Any]] = []
        index: list[int] = []
        for at, piece in enumerate(pieces):
            count = piece.get("count", 1)
            if type(count) is not int or count < 1:
                raise ValueError(f"space {space['space_id']!r}: a group count of {count!r}")
            total += count - 1
            if total > MAX_EXPANDED_PIECES:
                raise ValueError(f"the view expands to more than {MAX_EXPANDED_PIECES} pieces")
            copy = {key: value for key, value in piece.items() if key != "count"}
            expanded.extend(dict(copy) for _ in range(count))
            index.extend([at] * count)
        spaces.append({**space, "pieces": expanded})
        view_index[space["space_id"]] = index
    state: StateDict = {**view, "spaces": spaces} if "spaces" in view else dict(view)  # type: ignore[assignment]
    return ExpandedView(state, view_index)
