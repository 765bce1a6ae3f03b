;; Every ABI v1 export, but _initialize traps: the module cannot even be described.
(module
  (memory (export "memory") 1)
  (func (export "_initialize") unreachable)
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64) (i64.const 0))
  (func (export "wc_call") (param i32 i32 i32 i32) (result i64) (i64.const 0)))
