;; A guest without tablehost_panic_message: refused at validation.
(module
  (memory (export "memory") 1)
  (func (export "tablehost_abi_v1") (result i32) (i32.const 0))
  (func (export "tablehost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tablehost_dealloc") (param i32 i32))
  (func (export "tablehost_call") (param i32 i32 i32) (result i64) (i64.const 0)))
