;; A module that loads fine but whose source tasks misbehave in POLL, one way each. OPEN returns the
;; first letter of the plugin name as the handle, and POLL dispatches on it:
;;   Trapper  'T' 84  writes "panic: boom" to stderr, then traps (unreachable)
;;   Spinner  'S' 83  loops forever
;;   Hog      'H' 72  grows memory 8 pages at a time until memory.grow fails, then traps
;;   Wild     'W' 87  returns a result pointer far outside its memory
;;   Flaky    'F' 70  returns a retriable error
;;   Liar     'L' 76  passes a bad pointer to wasmconnect.log
;;   Quitter  'Q' 81  exits through WASI proc_exit(3), as the Go runtime does on a fatal error
;;   Clearer  'C' 67  grows memory to 4 MiB, then fills all of it with memory.fill, forever
;; It has no _initialize, to cover modules without one.
(module $misbehave
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasmconnect" "log" (func $log (param i32 i32 i32)))

  (memory (export "memory") 1)

  (data (i32.const 1024)
    "{\"abi\":1,\"plugins\":["
    "{\"name\":\"Trapper\",\"class\":\"test.misbehave.Trapper\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Spinner\",\"class\":\"test.misbehave.Spinner\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Hog\",\"class\":\"test.misbehave.Hog\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Wild\",\"class\":\"test.misbehave.Wild\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Flaky\",\"class\":\"test.misbehave.Flaky\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Liar\",\"class\":\"test.misbehave.Liar\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Quitter\",\"class\":\"test.misbehave.Quitter\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]},"
    "{\"name\":\"Clearer\",\"class\":\"test.misbehave.Clearer\",\"kind\":\"source\",\"version\":\"1\",\"config\":[]}"
    "]}")
  (data (i32.const 3072) "panic: boom\n")        ;; 12 bytes
  (data (i32.const 3200) "\"plugin\":\"")         ;; 10 bytes
  (data (i32.const 3328) "source not ready")     ;; 16 bytes
  (data (i32.const 3456) "{\"handle\":00}")       ;; 13 bytes, digits at 3466 and 3467

  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param $n i32) (result i32) (i32.const 16384))
  (func (export "wc_free") (param i32 i32))

  (func (export "wc_describe") (result i64)
    (local $q i32)
    (local.set $q (i32.const 1024))
    (block $d
      (loop $l
        (br_if $d (i32.eqz (i32.load8_u (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $l)))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $q) (i32.const 1024)))))

  ;; the first byte of the plugin name in an OPEN request, or 0
  (func $plugin_letter (param $p i32) (param $n i32) (result i32)
    (local $end i32) (local $i i32)
    (local.set $end (i32.sub (i32.add (local.get $p) (local.get $n)) (i32.const 10)))
    (block $nf
      (loop $l
        (br_if $nf (i32.gt_u (local.get $p) (local.get $end)))
        (local.set $i (i32.const 0))
        (block $mismatch
          (loop $c
            (if (i32.eq (local.get $i) (i32.const 10))
              (then (return (i32.load8_u (i32.add (local.get $p) (i32.const 10))))))
            (br_if $mismatch
              (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i)))
                      (i32.load8_u (i32.add (i32.const 3200) (local.get $i)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $c)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func (export "wc_call") (param $h i32) (param $op i32) (param $p i32) (param $n i32) (result i64)
    (local $c i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then
        (local.set $c (call $plugin_letter (local.get $p) (local.get $n)))
        (i32.store8 (i32.const 3466) (i32.add (i32.const 48) (i32.div_u (local.get $c) (i32.const 10))))
        (i32.store8 (i32.const 3467) (i32.add (i32.const 48) (i32.rem_u (local.get $c) (i32.const 10))))
        (return (i64.or (i64.shl (i64.const 3456) (i64.const 32)) (i64.const 13)))))
    (if (i32.ne (local.get $op) (i32.const 5)) (then (return (i64.const 0))))
    ;; POLL
    (if (i32.eq (local.get $h) (i32.const 84))
      (then
        (i32.store (i32.const 0) (i32.const 3072))
        (i32.store (i32.const 4) (i32.const 12))
        (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
        unreachable))
    (if (i32.eq (local.get $h) (i32.const 83))
      (then (loop $forever (br $forever))))
    (if (i32.eq (local.get $h) (i32.const 72))
      (then
        (loop $grow
          (br_if $grow (i32.ne (memory.grow (i32.const 8)) (i32.const -1))))
        unreachable))
    (if (i32.eq (local.get $h) (i32.const 87))
      (then (return (i64.const 0xfffffff000000064))))
    (if (i32.eq (local.get $h) (i32.const 70))
      (then (return (i64.or (i64.shl (i64.const 3328) (i64.const 32)) (i64.const 0xc0000010)))))
    (if (i32.eq (local.get $h) (i32.const 76))
      (then (call $log (i32.const 2) (i32.const 0x7ffffff0) (i32.const 100))))
    (if (i32.eq (local.get $h) (i32.const 81))
      (then (call $proc_exit (i32.const 3))))
    (if (i32.eq (local.get $h) (i32.const 67))
      (then
        (drop (memory.grow (i32.const 63)))
        (loop $fill
          (memory.fill (i32.const 0) (i32.const 7) (i32.const 0x400000))
          (br $fill))))
    (i64.const 0))
)
