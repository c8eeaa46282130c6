;; Setup offers player 1 a click; the step it leads to recurses without end (a move that
;; overflows the wasm stack, as an uploaded module's SubmitAction would).
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(func $down (param $depth i32) (result i32)
  (i32.add (call $down (i32.add (local.get $depth) (i32.const 1))) (i32.const 1)))
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.eq (local.get $op) (i32.const 3))
    (then (drop (call $down (i32.const 0)))))
  (i64.const 0))
