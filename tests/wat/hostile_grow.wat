;; step grows memory 1 MiB at a time until the host refuses, then aborts like an allocator would.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (loop $more
        (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      unreachable))
  (i64.const 0))
