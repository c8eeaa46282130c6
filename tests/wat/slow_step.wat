;; An honest but slow game: setup offers player 1 a click; every step burns about 32 M fuel
;; (about 10 ms of CPU) and offers the click again. Fuel makes such a move
;; acceptable or not, the same on every machine; a busy machine only makes it slower.
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 13312) "{\"patches\":[{\"op\":\"set_meta\",\"key\":\"moved\",\"value\":true}],\"rng_used\":false,\"allow_undo\":false,\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(func $burn (param $n i32)
  (loop $again
    (local.set $n (i32.sub (local.get $n) (i32.const 1)))
    (br_if $again (i32.ne (local.get $n) (i32.const 0)))))
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (call $burn (i32.const 4000000))
      (return (call $packed_cstr (i32.const 13312)))))
  (i64.const 0))
