;; step grows its memory to 31 MiB (under the 32 MiB cap: no grow is refused), then hits
;; `unreachable`: a trap near the cap, to be reported as a trap, not as the memory budget.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (drop (memory.grow (i32.sub (i32.const 496) (memory.size))))
      unreachable))
  (i64.const 0))
