;; Needs 200 pages (12.5 MiB) of memory from the start: more than the tests' 8 MiB cap.
(module
  (memory (export "memory") 200)
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64) (i64.const 0))
  (func (export "wc_call") (param i32 i32 i32 i32) (result i64) (i64.const 0)))
