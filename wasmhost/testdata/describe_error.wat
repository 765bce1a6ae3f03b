;; wc_describe returns an error result.
(module
  (memory (export "memory") 1)
  (data (i32.const 16) "descriptor unavailable")  ;; 22 bytes
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 0x80000016)))
  (func (export "wc_call") (param i32 i32 i32 i32) (result i64) (i64.const 0)))
