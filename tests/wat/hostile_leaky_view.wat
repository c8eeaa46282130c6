;; Deals player 2 a hidden queen of spades, and writes the same card into public meta data: every
;; other viewer is served a private kind it may not see. `tablehost check` must report the leak.
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1},{\"player_id\":2}],\"spaces\":[{\"space_id\":\"hand2\",\"owner\":2,\"pieces\":[{\"public_kind\":\"card\",\"private_kind\":\"queen_of_spades\"}]}],\"meta_data\":{\"peek\":\"queen_of_spades\"},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"hand2\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 13312) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1},{\"player_id\":2}],\"spaces\":[{\"space_id\":\"hand2\",\"owner\":2,\"pieces\":[{\"public_kind\":\"card\",\"private_kind\":\"queen_of_spades\"}]}],\"meta_data\":{\"peek\":\"queen_of_spades\"},\"log\":[]},\"patches\":[],\"rng_used\":false,\"allow_undo\":false,\"scores\":{},\"game_over\":true,\"actions\":{}}\00")
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.eq (local.get $op) (i32.const 3))
    (then (return (call $packed_cstr (i32.const 13312)))))
  (i64.const 0))
