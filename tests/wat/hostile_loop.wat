;; step never returns: must run out of fuel or wall clock.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then (loop $forever (br $forever))))
  (i64.const 0))
