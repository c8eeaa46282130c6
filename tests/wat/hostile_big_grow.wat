;; step asks for 40 MiB more in one memory.grow while far under the 32 MiB cap: refused (-1),
;; then it aborts like an allocator. Plenty of headroom is left, yet the cap caused the trap.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (if (i32.eq (memory.grow (i32.const 640)) (i32.const -1))
        (then unreachable))))
  (i64.const 0))
