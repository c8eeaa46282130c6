;; Burns about 0.6 M fuel on every call, then answers state_miss to any request by reference:
;; the host's resend with the full state burns as much again. One move's budget must cover both
;; crossings, so with fuel_per_call = 1 M the move runs out of fuel instead of spending 1.2 M.
(data (i32.const 11264) "{\"error\":{\"code\":\"state_miss\",\"message\":\"no such ref\"}}\00")
(data (i32.const 11520) "\"state_ref\"\00")
(func $burn (param $n i32)
  (loop $again
    (local.set $n (i32.sub (local.get $n) (i32.const 1)))
    (br_if $again (i32.ne (local.get $n) (i32.const 0)))))
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
  (if (i32.eq (local.get $op) (i32.const 1)) (then (return (i64.const 0))))
  (call $burn (i32.const 120000))
  (if (call $contains (local.get $ptr) (local.get $len) (i32.const 11520))
    (then (return (call $packed_cstr (i32.const 11264)))))
  (i64.const 0))
