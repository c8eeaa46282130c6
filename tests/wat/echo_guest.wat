;; A minimal, well-behaved ABI v1 guest (docs/abi.md) for host tests.
;;
;; Every op answers a fixed, well-shaped response for that op plus an "echo" field holding the
;; request exactly as the guest received it, so tests can see what crossed the boundary
;; (for instance whether a request carried "state" or only "state_ref").
;;
;; Hostile variants (tests/wat/hostile_*.wat) replace the function $on_call below: it runs before
;; every op and may misbehave, or return a packed (ptr << 32 | len) response of its own (0 = go on).
(module
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))   ;; bump allocator top; nothing is ever freed
  (global $panicked (mut i32) (i32.const 0))   ;; set by a hostile $on_call before it traps

  ;; NUL-terminated response prefixes, one per op, each ending just before the echoed request.
  (data (i32.const 1024) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1},{\"player_id\":2}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[]},\"printed\":\"setup ran\\n\",\"echo\":\00")
  (data (i32.const 2048) "{\"actions\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}],\"echo\":\00")
  (data (i32.const 3072) "{\"patches\":[],\"rng_used\":false,\"allow_undo\":false,\"scores\":{},\"game_over\":false,\"actions\":{},\"state\":{\"active_player_ids\":[],\"players\":[],\"spaces\":[],\"meta_data\":{},\"log\":[]},\"echo\":\00")
  (data (i32.const 4096) "{\"scores\":{\"1\":{\"public_points\":[1.0],\"private_points\":[]}},\"echo\":\00")
  (data (i32.const 5120) "{\"game_over\":false,\"scores\":{},\"echo\":\00")
  (data (i32.const 6144) "{\"message\":\"step exploded: the board is on fire\",\"printed\":\"about to explode\\n\"}\00")
  (data (i32.const 7168) "{\"message\":null,\"printed\":\"\"}\00")
  (data (i32.const 8192) "{\"error\":{\"code\":\"unknown_op\",\"message\":\"no such op\"}}\00")

  (func $strlen (param $ptr i32) (result i32)
    (local $end i32)
    (local.set $end (local.get $ptr))
    (block $done
      (loop $scan
        (br_if $done (i32.eqz (i32.load8_u (local.get $end))))
        (local.set $end (i32.add (local.get $end) (i32.const 1)))
        (br $scan)))
    (i32.sub (local.get $end) (local.get $ptr)))

  ;; Packs a NUL-terminated string at $ptr as the ABI's (ptr << 32 | len).
  (func $packed_cstr (param $ptr i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
      (i64.extend_i32_u (call $strlen (local.get $ptr)))))

  ;; Grows memory so that bytes below $end exist; traps when the host refuses to grow.
  (func $ensure (param $end i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then unreachable)))))

  (func (export "tablehost_abi_v1") (result i32) (i32.const 0))

  (func (export "tablehost_alloc") (param $len i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (call $ensure (i32.add (local.get $ptr) (local.get $len)))
    (global.set $heap (i32.add (local.get $ptr) (local.get $len)))
    (local.get $ptr))

  (func (export "tablehost_dealloc") (param $ptr i32) (param $len i32))

  ;; Replaced by hostile variants.
  (func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (i64.const 0))

  (func (export "tablehost_call") (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (local $prefix i32) (local $prefix_len i32) (local $out i32) (local $total i32) (local $hook i64)
    (local.set $hook (call $on_call (local.get $op) (local.get $ptr) (local.get $len)))
    (if (i64.ne (local.get $hook) (i64.const 0)) (then (return (local.get $hook))))
    (if (i32.or (i32.lt_s (local.get $op) (i32.const 1)) (i32.gt_s (local.get $op) (i32.const 5)))
      (then (return (call $packed_cstr (i32.const 8192)))))
    ;; op n (1..5) has its prefix at n * 1024
    (local.set $prefix (i32.mul (local.get $op) (i32.const 1024)))
    (local.set $prefix_len (call $strlen (local.get $prefix)))
    (local.set $out (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $total (i32.add (i32.add (local.get $prefix_len) (local.get $len)) (i32.const 1)))
    (call $ensure (i32.add (local.get $out) (local.get $total)))
    (memory.copy (local.get $out) (local.get $prefix) (local.get $prefix_len))
    (memory.copy (i32.add (local.get $out) (local.get $prefix_len)) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.sub (local.get $total) (i32.const 1))) (i32.const 125)) ;; '}'
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
      (i64.extend_i32_u (local.get $total))))

  (func (export "tablehost_panic_message") (result i64)
    (if (result i64) (global.get $panicked)
      (then (call $packed_cstr (i32.const 6144)))
      (else (call $packed_cstr (i32.const 7168)))))
)
