;; step grows its memory to 31 MiB (under the 32 MiB cap, so no grow is refused), then divides
;; by zero: a trap, to be reported as such, not as the memory budget.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (drop (memory.grow (i32.sub (i32.const 496) (memory.size))))
      (drop (i32.div_u (i32.const 1) (i32.sub (local.get $op) (i32.const 3))))))
  (i64.const 0))
