;; Version 1, but wc_call is missing.
(module
  (memory (export "memory") 1)
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64) (i64.const 0)))
