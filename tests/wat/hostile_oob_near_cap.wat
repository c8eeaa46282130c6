;; step grows its memory to 31 MiB (no grow refused), then writes at 40 MiB: an out-of-bounds
;; trap near the cap that no refused grow caused, to be reported as out of bounds.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (drop (memory.grow (i32.sub (i32.const 496) (memory.size))))
      (i32.store (i32.const 41943040) (i32.const 1))))
  (i64.const 0))
