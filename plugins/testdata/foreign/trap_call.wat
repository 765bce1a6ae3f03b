;; A module that loads (its descriptor is valid) but traps on every wc_call: plugin check must say
;; so in plain words, and a worker fails the task, never itself.
(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"abi\":1,\"plugins\":[{\"name\":\"Trapping\",\"class\":\"test.foreign.TrappingSource\",\"kind\":\"source\",\"version\":\"1.0.0\",\"config\":[]}]}")
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 4096))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 125)))
  (func (export "wc_call") (param i32 i32 i32 i32) (result i64) unreachable))
