;; step grows memory 1 MiB at a time until the host refuses, ignores the -1 and writes past the
;; end of its memory: the out-of-bounds trap follows from the memory cap, reported as memory.
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (loop $more
        (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      (i32.store (i32.shl (memory.size) (i32.const 16)) (i32.const 1))))
  (i64.const 0))
