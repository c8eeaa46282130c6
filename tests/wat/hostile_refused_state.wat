;; Odd steps set meta "n" and allow undo; even steps answer a patch that does not fit (the host
;; refuses the move after the guest cached its result). Used to show that a refused state never
;; comes back under a later state reference (after an undo the versions line up again).
(global $steps (mut i32) (i32.const 0))
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 13312) "{\"patches\":[{\"op\":\"set_meta\",\"key\":\"n\",\"value\":1}],\"rng_used\":false,\"allow_undo\":true,\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 14336) "{\"patches\":[{\"op\":\"remove_piece\",\"space_id\":\"nowhere\",\"index\":0}],\"rng_used\":false,\"allow_undo\":true,\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (global.set $steps (i32.add (global.get $steps) (i32.const 1)))
      (if (i32.and (global.get $steps) (i32.const 1))
        (then (return (call $packed_cstr (i32.const 13312))))
        (else (return (call $packed_cstr (i32.const 14336)))))))
  (i64.const 0))
