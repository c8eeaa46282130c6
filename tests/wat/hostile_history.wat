;; Keeps a call counter in a global and lets it into its answers (as a HashMap's iteration order
;; would): odd steps allow undo, even ones do not. Replayed in a fresh instance per call, every
;; step is the first, so `tablehost check` must report a difference. Steps answer the state
;; too, as the SDK does when asked (check compares the host's mirror with it).
(global $calls (mut i32) (i32.const 0))
(data (i32.const 12288) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"score_labels\":[\"Points\"],\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 13312) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"allow_undo\":false,\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(data (i32.const 14336) "{\"state\":{\"active_player_ids\":[1],\"players\":[{\"player_id\":1}],\"spaces\":[{\"space_id\":\"a\",\"kind\":\"cell\"}],\"meta_data\":{},\"log\":[]},\"patches\":[],\"rng_used\":false,\"allow_undo\":true,\"scores\":{},\"game_over\":false,\"actions\":{\"1\":[{\"action\":{\"type\":\"space_click\",\"space_id\":\"a\"},\"intent\":\"choice\",\"label\":\"a\"}]}}\00")
(func $on_call (param $op i32) (param $ptr i32) (param $len i32) (result i64)
  (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
  (if (i32.eq (local.get $op) (i32.const 1))
    (then (return (call $packed_cstr (i32.const 12288)))))
  (if (i32.eq (local.get $op) (i32.const 3))
    (then
      (if (i32.and (global.get $calls) (i32.const 1))
        (then (return (call $packed_cstr (i32.const 14336))))
        (else (return (call $packed_cstr (i32.const 13312)))))))
  (i64.const 0))
