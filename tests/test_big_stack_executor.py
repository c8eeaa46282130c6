"""The gRPC server's request threads are big-stack threads: guest calls run on them in place."""

from __future__ import annotations

import threading

from tablehost._stacks import BigStackExecutor, current_stack_bytes, on_big_stack, stack_bytes_for
from tablehost.limits import DEFAULT_LIMITS


def test_a_request_thread_runs_guest_work_in_place_and_leaves_the_process_stack_size_alone() -> None:
    wasm_stack = DEFAULT_LIMITS.stack_bytes
    before = threading.stack_size()
    with BigStackExecutor(wasm_stack, max_workers=3, thread_name_prefix="t") as pool:

        def job() -> tuple[int, int, int]:
            here = threading.get_ident()
            return current_stack_bytes(), here, on_big_stack(wasm_stack, threading.get_ident)

        results = [f.result() for f in [pool.submit(job) for _ in range(6)]]
    assert threading.stack_size() == before
    for stack, here, guest_thread in results:
        assert stack >= stack_bytes_for(wasm_stack)
        assert guest_thread == here  # no hand-off to another thread


def test_work_submitted_one_at_a_time_reuses_the_idle_thread_and_never_starts_another() -> None:
    wasm_stack = DEFAULT_LIMITS.stack_bytes
    with BigStackExecutor(wasm_stack, max_workers=8, thread_name_prefix="t") as pool:
        threads = set()
        for _ in range(20):
            stack, ident = pool.submit(lambda: (current_stack_bytes(), threading.get_ident())).result()
            assert stack >= stack_bytes_for(wasm_stack)
            threads.add(ident)
            # the worker counts itself idle only after handing back the result
            for _ in range(1000):
                if pool._idle_semaphore._value > 0:  # type: ignore[attr-defined]
                    break
                threading.Event().wait(0.001)
        assert len(threads) == 1
        assert len(pool._threads) == 1  # type: ignore[attr-defined]
