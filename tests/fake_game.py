"""A tiny game written in Python behind the GuestPool interface, for testing platform rules.

It lets tests trigger exactly the move kinds the platform treats differently: undoable and
not, random, revealing (a draw into a hand, a private log line, turning a card up), a panic
and a malformed patch. It applies its own patches with :mod:`tablehost.table`, so it shares
the state semantics of a real guest. Rules: two or more players; "inc" raises the counter,
and the game is over when the counter reaches 3.
"""

from __future__ import annotations

import copy
from typing import Any

from tablehost.errors import GuestPanic
from tablehost.rng import Rng
from tablehost.table import apply_patches, normalize_state

BUTTONS = ("inc", "draw", "roll", "whisper", "flip", "fixed", "end", "end_undoable", "boom", "badpatch")


def button(name: str) -> dict[str, Any]:
    return {"type": "button_click", "button": {"id": name, "label": name, "location": "", "disabled": False}}


class FakePool:
    """Implements the GuestPool calls used by Match; counts calls by op in ``calls``."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def _count(self, op: str) -> None:
        self.calls[op] = self.calls.get(op, 0) + 1

    def setup(self, players: list[dict[str, Any]], seed: int, next_ref: str) -> dict[str, Any]:
        self._count("setup")
        ids = [p["player_id"] for p in players]
        state = {
            "active_player_ids": [ids[0]],
            "players": [dict(p, public_state={}, private_state={}) for p in players],
            "spaces": [
                {"space_id": "deck", "kind": "deck", "arrangement": "collection",
                 "pieces": [{"public_kind": "back", "private_kind": f"card{i}"} for i in range(4)]},
                {"space_id": "counter", "kind": "counter", "pieces": [{"public_kind": "0"}]},
                {"space_id": "row", "kind": "row", "pieces": [{"public_kind": "back", "private_kind": "ace"}]},
            ]
            + [{"space_id": f"hand-{pid}", "kind": "hand", "owner": pid, "arrangement": "collection"} for pid in ids],
            "meta_data": {},
            "log": [],
        }
        patches = [{"op": "log", "entry": {"text": f"setup with seed {seed % 1000}"}}]
        full = normalize_state(copy.deepcopy(state))
        apply_patches(full, patches)
        return {"state": state, "patches": patches, "rng_used": False, "score_labels": ["Counter"],
                **self._outcome(full)}

    def _outcome(self, state: dict[str, Any]) -> dict[str, Any]:
        counter = int(state["spaces"][1]["pieces"][0]["public_kind"])
        over = counter >= 3
        scores = {str(p["player_id"]): {"public_points": [float(counter)], "private_points": []}
                  for p in state["players"]}
        actions = {} if over else {str(pid): self._actions(state, pid) for pid in state["active_player_ids"]}
        return {"scores": scores, "game_over": over, "actions": actions}

    def _actions(self, state: dict[str, Any], player_id: int) -> list[dict[str, Any]]:
        names = [n for n in BUTTONS if n != "draw" or state["spaces"][0]["pieces"]]
        buttons = [{"action": button(n), "intent": "choice", "label": n} for n in names]
        takes = [  # a click on any hidden deck card takes that very card
            {"action": {"type": "piece_click", "space_id": "deck", "index": i}, "intent": "choice", "label": "take"}
            for i in range(len(state["spaces"][0]["pieces"]))
        ]
        return buttons + takes

    def step(self, state_ref: str, get_state: Any, next_ref: str, player_id: int, action: dict[str, Any],
             seed: int, *, want_state: bool = False) -> dict[str, Any]:
        self._count("step")
        state = copy.deepcopy(get_state())
        if action["type"] == "piece_click":
            patches = [{"op": "move_piece", "from": "deck", "index": action["index"], "to": f"hand-{player_id}"}]
            apply_patches(state, patches)
            return {"patches": patches, "rng_used": False, "allow_undo": True, **self._outcome(state)}
        name = action["button"]["id"]
        counter = int(state["spaces"][1]["pieces"][0]["public_kind"])
        others = [p["player_id"] for p in state["players"] if p["player_id"] != player_id]
        patches: list[dict[str, Any]] = []
        allow_undo, rng_used = True, False
        if name == "inc":
            patches = [{"op": "set_public_kind", "space_id": "counter", "index": 0, "kind": str(counter + 1)},
                       {"op": "log", "entry": {"text": f"{player_id} counted {counter + 1}"}}]
        elif name == "draw":
            patches = [{"op": "move_piece", "from": "deck", "index": 0, "to": f"hand-{player_id}"}]
        elif name == "roll":
            rng_used = True
            patches = [{"op": "set_meta", "key": "roll", "value": Rng(seed).roll(6)}]
        elif name == "whisper":
            patches = [{"op": "log", "entry": {"text": "a secret", "for_player": {str(player_id): "psst"}}}]
        elif name == "flip":
            patches = [{"op": "set_public_kind", "space_id": "row", "index": 0, "kind": "ace"}]
        elif name == "fixed":
            allow_undo = False
            patches = [{"op": "set_meta", "key": "fixed", "value": True}]
        elif name in ("end", "end_undoable"):
            allow_undo = name == "end_undoable"
            patches = [{"op": "set_active_players", "player_ids": others[:1]}]
        elif name == "boom":
            raise GuestPanic("the game panicked: boom", printed="about to explode\n")
        elif name == "badpatch":
            patches = [{"op": "set_public_kind", "space_id": "counter", "index": 0, "kind": "9"},
                       {"op": "remove_piece", "space_id": "nowhere", "index": 0}]
        apply_patches(state, patches)
        response = {"patches": patches, "rng_used": rng_used, "allow_undo": allow_undo, **self._outcome(state)}
        if want_state:
            response["state"] = state
        return response

    def actions(self, state_ref: str, get_state: Any, player_id: int) -> list[dict[str, Any]]:
        self._count("actions")
        return self._actions(get_state(), player_id)

    def game_over(self, state_ref: str, get_state: Any) -> dict[str, Any]:
        self._count("game_over")
        outcome = self._outcome(get_state())
        return {"game_over": outcome["game_over"], "scores": outcome["scores"]}

    def scores(self, state_ref: str, get_state: Any) -> dict[str, Any]:
        return {"scores": self._outcome(get_state())["scores"]}

    def discard_ref(self, state_ref: str) -> None:
        pass

    def close(self) -> None:
        pass
