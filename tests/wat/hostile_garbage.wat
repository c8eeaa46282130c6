;; Each op but setup answers a different kind of garbage; setup behaves.
;;   actions   -> valid JSON of the wrong shape
;;   scores    -> a pointer far outside memory
;;   game_over -> bytes that are not UTF-8
;;   step      -> bytes that are not JSON
(data (i32.const 10240) "this is not JSON\00")
(data (i32.const 10496) "{\"actions\":\"\ff\fe\"}\00")
(data (i32.const 10752) "{\"actions\":{\"not\":\"a list\"}}\00")
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 2)) (then (return (call $packed_cstr (i32.const 10752)))))
  (if (i32.eq (local.get $op) (i32.const 4))
    (then (return (i64.or (i64.shl (i64.const 0xFFFF0000) (i64.const 32)) (i64.const 16)))))
  (if (i32.eq (local.get $op) (i32.const 5)) (then (return (call $packed_cstr (i32.const 10496)))))
  (if (i32.eq (local.get $op) (i32.const 3)) (then (return (call $packed_cstr (i32.const 10240)))))
  (i64.const 0))
