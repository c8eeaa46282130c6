"""Budgets for guest calls and modules (docs/abi.md section 17, "Budgets and isolation")."""

from __future__ import annotations

from dataclasses import dataclass, replace

MiB = 1024 * 1024
KiB = 1024


@dataclass(frozen=True)
class Limits:
    """Per-call and per-module budgets. All configurable per server; ``tightened`` per module.

    Attributes:
        wall_ms: wall-clock milliseconds per guest call (epoch deadline).
        fuel_per_call: wasmtime fuel units (about one per wasm instruction) per call.
        memory_bytes: linear-memory cap per instance, bytes.
        stack_bytes: wasm stack cap (``max_wasm_stack``), bytes.
        module_bytes: largest accepted module, bytes.
        response_bytes: largest accepted response, bytes.
        instances_per_module: size of a module's instance pool, which is also its cap on
            concurrent calls (a call waits at most ``wall_ms`` for a free slot).
        queue_ms: longest a call waits for a run slot (about one per core, shared by every
            module: :mod:`tablehost.guest.scheduler`), milliseconds; then ``module/busy``.
        replay_wall_factor: ``wall_ms`` is multiplied by this for replay and resume, where fuel
            alone decides (a recorded move must replay on a busy machine).
        liveness_factor: ``wall_ms`` is counted in CPU time of the guest's thread; a call that
            waits for a core is stopped anyway after ``wall_ms * liveness_factor`` of wall-clock
            time (the hard liveness cap).
        quarantine_after: failed calls (budget, trap, panic, protocol) within 10 s after which a
            module is quarantined.
        quarantine_ms: first quarantine, milliseconds; doubles while failures continue (up to
            64 times), back to this after 10 s without a quarantine.
        compile_ms: wall-clock milliseconds an upload's validation and compilation may take.
        compile_memory_bytes: address space of the process that compiles an upload, bytes.

    Fuel decides whether a call is accepted (it is deterministic); ``wall_ms`` only guards
    liveness. One move's calls (a ``state_miss`` resend and buffer allocations included) share
    one ``fuel_per_call`` and one ``wall_ms``.
    """

    wall_ms: int = 250
    fuel_per_call: int = 50_000_000
    memory_bytes: int = 32 * MiB
    stack_bytes: int = 512 * KiB
    module_bytes: int = 16 * MiB
    response_bytes: int = 4 * MiB
    instances_per_module: int = 4
    queue_ms: int = 5_000
    replay_wall_factor: int = 10
    liveness_factor: int = 4
    quarantine_after: int = 8
    quarantine_ms: int = 2_000
    compile_ms: int = 20_000
    compile_memory_bytes: int = 2048 * MiB

    def tightened(self, **smaller: int) -> Limits:
        """Return a copy where each given budget is ``min(current, given)``; never loosens.

        Raises:
            ValueError: an unknown budget name or a non-positive value.
        """
        fields = {}
        for name, value in smaller.items():
            if not hasattr(self, name):
                raise ValueError(f"unknown budget {name!r}")
            if value <= 0:
                raise ValueError(f"budget {name} must be positive, got {value}")
            fields[name] = min(getattr(self, name), value)
        return replace(self, **fields)

    def for_replay(self) -> Limits:
        """A copy whose ``wall_ms`` is widened by ``replay_wall_factor`` (fuel unchanged: it decides)."""
        return replace(self, wall_ms=self.wall_ms * self.replay_wall_factor)


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class AnswerLimits:
    """What the gate (:mod:`tablehost.gate`) lets through of one guest answer, and per match.

    Every later stage must carry what passes: the table, the journal, gRPC (a
    ``google.protobuf.Value`` nested about 30 levels deep inside a view no longer parses:
    measured with protobuf 7 / upb, ``bench/gate_cost.py --depth``), and the clients.

    Attributes:
        value_depth_max: containers (objects, arrays) a value stored under a state key
            (``public_state``, ``private_state``, ``meta_data``, a patch's ``value``) may nest;
            a scalar is depth 0, ``{"a": [1]}`` depth 2. Measured ceiling inside a piece's
            ``public_state`` of a MatchView: 30 objects, 36 arrays; 16 leaves room for the
            messages wrapping a view.
        string_chars_max: characters of any one string (ids, kinds, keys, labels, values).
        log_line_chars_max: characters of one log line (``text`` and each ``for_player`` line).
        offers_per_player_max: offered actions for one player in one answer.
        offers_total_max: offered actions for all players together in one answer.
        patches_max: patches in one answer.
        patch_bytes_max: estimated JSON bytes of one answer's patches (the gate's walk counts
            string lengths plus a few bytes per node).
        state_bytes_max: JSON bytes of one match's state; a move whose patches could take it
            over is refused (an upper bound: the state before plus the patches' estimate).
        score_points_max: entries of one ``public_points`` / ``private_points`` list, and of
            ``score_labels``.
        printed_chars_max: characters of ``printed`` in one answer (the SDK caps at 256 KiB).
        printed_kept_chars: characters of ``printed`` kept per call in the record and the
            server log (the newest are kept).
    """

    value_depth_max: int = 16
    string_chars_max: int = 4 * KiB
    log_line_chars_max: int = KiB
    offers_per_player_max: int = 1024
    offers_total_max: int = 4096
    patches_max: int = 10_000
    patch_bytes_max: int = 256 * KiB
    state_bytes_max: int = MiB
    score_points_max: int = 64
    printed_chars_max: int = 256 * KiB + 64
    printed_kept_chars: int = 4 * KiB


DEFAULT_ANSWER_LIMITS = AnswerLimits()
