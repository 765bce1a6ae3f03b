;; HasKey: a wasmconnect predicate in WebAssembly text, written against the plugin ABI
;; (sdk/ABI.md) with no SDK and no libraries, to show what every SDK hides. It matches the records
;; whose key is not null (use it as predicates.<alias>.type with negate=true to drop keyless
;; records). It has no settings, imports nothing and keeps no state.
;;
;; Build: wat2wasm examples/plugins/haskey/haskey.wat -o haskey.wasm
(module $haskey
  ;; §1: the module defines and exports its memory. Below 1024: the descriptor and canned answers;
  ;; from 64 KiB a bump heap for wc_alloc and the results.
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))

  ;; §3: the descriptor (128 bytes).
  (data (i32.const 16) "{\"abi\":1,\"plugins\":[{\"name\":\"HasKey\",\"class\":\"com.example.predicates.HasKey\",\"kind\":\"predicate\",\"version\":\"1.0.0\",\"config\":[]}]}")
  (data (i32.const 512) "{\"handle\":1}")       ;; OPEN's answer: 12 bytes
  (data (i32.const 528) "{\"errors\":{}}")      ;; VALIDATE's answer: 13 bytes
  (data (i32.const 544) "HasKey: unsupported operation")  ;; 29 bytes
  (data (i32.const 576) "HasKey: malformed record batch") ;; 30 bytes
  (data (i32.const 608) "\"plugin\"")                      ;; 8 bytes
  (data (i32.const 624) "\"HasKey\"")                      ;; 8 bytes
  (data (i32.const 640) "\"com.example.predicates.HasKey\"") ;; 31 bytes
  (data (i32.const 672) "HasKey: OPEN of a plugin this module does not have") ;; 50 bytes

  (func (export "wc_abi_version") (result i32) (i32.const 1))

  ;; §2: the host asks for an input buffer once and reuses it; a bump allocator is enough for a
  ;; module that never frees (the host frees only to grow its buffer).
  (func (export "wc_alloc") (param $n i32) (result i32) (call $alloc (local.get $n)))
  (func (export "wc_free") (param i32 i32))

  ;; A result packs a buffer: pointer in the high 32 bits, length in the low 30; bit 31 = error.
  (func $ok (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))
  (func $err (param $p i32) (param $n i32) (result i64)
    (i64.or (call $ok (local.get $p) (local.get $n)) (i64.const 0x80000000)))

  (func (export "wc_describe") (result i64) (call $ok (i32.const 16) (i32.const 128)))

  ;; §5: `bytes` is u32 length + bytes; `data` is a u8 tag then nothing (0 null), bytes (1 bytes,
  ;; 2 string) or two bytes (3 JSON: schema, payload). Each skip returns the position after it.
  (func $skip_bytes (param $p i32) (result i32)
    (i32.add (i32.add (local.get $p) (i32.const 4)) (i32.load (local.get $p))))
  (func $skip_data (param $p i32) (result i32)
    (local $tag i32)
    (local.set $tag (i32.load8_u (local.get $p)))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (if (i32.eqz (local.get $tag)) (then (return (local.get $p))))
    (local.set $p (call $skip_bytes (local.get $p)))
    (if (i32.eq (local.get $tag) (i32.const 3)) (then (local.set $p (call $skip_bytes (local.get $p)))))
    (local.get $p))

  ;; TEST (§5.7): u32 count, then one byte per record: 1 = the key is not null.
  (func $test (param $in i32) (param $len i32) (result i64)
    (local $n i32) (local $i i32) (local $p i32) (local $end i32) (local $out i32) (local $h i32)
    (local.set $end (i32.add (local.get $in) (local.get $len)))
    (if (i32.lt_u (local.get $len) (i32.const 4)) (then (return (call $err (i32.const 576) (i32.const 30)))))
    (local.set $n (i32.load (local.get $in)))
    (local.set $p (i32.add (local.get $in) (i32.const 4)))
    ;; the answer goes after the input, in memory the host does not read from
    (local.set $out (call $alloc_out (i32.add (local.get $n) (i32.const 4))))
    (if (i32.eqz (local.get $out)) (then (return (call $err (i32.const 544) (i32.const 29)))))
    (i32.store (local.get $out) (local.get $n))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $p (call $skip_bytes (local.get $p)))                 ;; topic
        (local.set $p (i32.add (local.get $p) (i32.const 20)))           ;; partition, offset, timestamp
        (i32.store8 (i32.add (i32.add (local.get $out) (i32.const 4)) (local.get $i))
          (i32.ne (i32.load8_u (local.get $p)) (i32.const 0)))         ;; the key's tag
        (local.set $p (call $skip_data (local.get $p)))                  ;; key
        (local.set $p (call $skip_data (local.get $p)))                  ;; value
        (local.set $h (i32.load (local.get $p)))                         ;; headers
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (block $hdone
          (loop $hnext
            (br_if $hdone (i32.eqz (local.get $h)))
            (local.set $p (call $skip_data (call $skip_bytes (local.get $p))))
            (local.set $h (i32.sub (local.get $h) (i32.const 1)))
            (br $hnext)))
        (local.set $p (call $skip_bytes (call $skip_bytes (local.get $p)))) ;; source partition, offset
        (br_if $done (i32.gt_u (local.get $p) (local.get $end)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (if (i32.ne (local.get $p) (local.get $end)) (then (return (call $err (i32.const 576) (i32.const 30)))))
    (call $ok (local.get $out) (i32.add (local.get $n) (i32.const 4))))

  ;; $at says whether the $n bytes at $p (which must end by $end) equal the $n bytes at $q.
  (func $at (param $p i32) (param $end i32) (param $q i32) (param $n i32) (result i32)
    (if (i32.gt_u (i32.add (local.get $p) (local.get $n)) (local.get $end)) (then (return (i32.const 0))))
    (block $diff
      (loop $next
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $diff (i32.ne (i32.load8_u (local.get $p)) (i32.load8_u (local.get $q))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; $names_us says whether an OPEN request (§4) names this plugin: "plugin", then blanks and a
  ;; colon, then "HasKey" or the class. Anything else, malformed input included, is refused.
  (func $names_us (param $p i32) (param $len i32) (result i32)
    (local $end i32) (local $c i32)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $found
      (loop $scan
        (br_if $found (call $at (local.get $p) (local.get $end) (i32.const 608) (i32.const 8)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br_if $scan (i32.lt_u (local.get $p) (local.get $end)))
        (return (i32.const 0))))
    (local.set $p (i32.add (local.get $p) (i32.const 8)))
    (block $skipped
      (loop $skip
        (br_if $skipped (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $skipped (i32.and (i32.ne (local.get $c) (i32.const 58)) (i32.gt_u (local.get $c) (i32.const 32))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $skip)))
    (i32.or (call $at (local.get $p) (local.get $end) (i32.const 624) (i32.const 8))
            (call $at (local.get $p) (local.get $end) (i32.const 640) (i32.const 31))))

  ;; $alloc_out returns a buffer for the result (bumped from the heap; reused each call).
  (global $out (mut i32) (i32.const 0))
  (global $outcap (mut i32) (i32.const 0))
  (func $alloc_out (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (global.get $outcap))
      (then
        (global.set $out (call $alloc (local.get $n)))
        (global.set $outcap (local.get $n))))
    (global.get $out))
  (func $alloc (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.and (i32.add (i32.add (local.get $p) (local.get $n)) (i32.const 7)) (i32.const -8)))
    (block $ok
      (br_if $ok (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
      (br_if $ok (i32.ne (memory.grow (i32.add (i32.shr_u (i32.sub (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1))) (i32.const -1)))
      (global.set $heap (local.get $p))
      (return (i32.const 0)))
    (local.get $p))

  ;; §4: OPEN (1), CLOSE (2), VALIDATE (3) and TEST (12); every other op is an error result.
  (func (export "wc_call") (param $handle i32) (param $op i32) (param $ptr i32) (param $len i32) (result i64)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then
        (if (call $names_us (local.get $ptr) (local.get $len)) (then (return (call $ok (i32.const 512) (i32.const 12)))))
        (return (call $err (i32.const 672) (i32.const 50)))))
    (if (i32.eq (local.get $op) (i32.const 2)) (then (return (i64.const 0))))
    (if (i32.eq (local.get $op) (i32.const 3)) (then (return (call $ok (i32.const 528) (i32.const 13)))))
    (if (i32.and (i32.eq (local.get $op) (i32.const 12)) (i32.eq (local.get $handle) (i32.const 1)))
      (then (return (call $test (local.get $ptr) (local.get $len)))))
    (call $err (i32.const 544) (i32.const 29)))
)
