;; step panics the way the SDK does: keep the message for tablehost_panic_message, then trap.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (global.set $panicked (i32.const 1))
      unreachable))
  (i64.const 0))
