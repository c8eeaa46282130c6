;; Setup offers player 1 a click; `actions` and `game_over` burn about 32 M fuel each (about 10
;; ms of CPU): what a restarted server asks of a match it resumes.
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(func $burn (param $n i32)
  (loop $again
    (local.set $n (i32.sub (local.get $n) (i32.const 1)))
    (br_if $again (i32.ne (local.get $n) (i32.const 0)))))
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.or (i32.eq (local.get $op) (i32.const 2)) (i32.eq (local.get $op) (i32.const 5)))
    (then (call $burn (i32.const 4000000))))
  (i64.const 0))
