;; step divides by zero: a trap without a panic message.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then (drop (i32.div_u (i32.const 1) (i32.sub (local.get $op) (i32.const 3))))))
  (i64.const 0))
