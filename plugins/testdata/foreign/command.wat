;; A WASI command, not a plugin: _start and a memory, none of the ABI v1 exports.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const 0))))
