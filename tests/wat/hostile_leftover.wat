;; Reads its request buffer past the length it was given: if the bytes beyond the request hold
;; "SECRET" (left there by a longer, earlier request), it answers scores with printed "LEAK".
;; Across matches this must never happen: an instance is fresh before it serves another match.
(data (i32.const 12288) "{\"scores\":{},\"printed\":\"LEAK\"}\00")
(data (i32.const 12544) "SECRET\00")
;; Whether the NUL-terminated needle at $needle occurs in $ptr..$ptr+$len.
(func $contains (param $ptr i32) (param $len i32) (param $needle i32) (result i32)
  (local $n i32) (local $at i32) (local $k i32)
  (local.set $n (call $strlen (local.get $needle)))
  (block $absent
    (loop $next_start
      (br_if $absent (i32.gt_u (i32.add (local.get $at) (local.get $n)) (local.get $len)))
      (local.set $k (i32.const 0))
      (block $mismatch
        (loop $compare
          (if (i32.eq (local.get $k) (local.get $n)) (then (return (i32.const 1))))
          (br_if $mismatch
            (i32.ne (i32.load8_u (i32.add (i32.add (local.get $ptr) (local.get $at)) (local.get $k)))
                    (i32.load8_u (i32.add (local.get $needle) (local.get $k)))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $compare)))
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (br $next_start)))
  (i32.const 0))
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  ;; the host's request buffer is at least 4096 bytes: look at all of it, not just $len
  (if (i32.and (i32.eq (local.get $op) (i32.const 4))
               (call $contains (i32.add (local.get $ptr) (local.get $len))
                               (i32.sub (i32.const 4096) (local.get $len)) (i32.const 12544)))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (i64.const 0))
