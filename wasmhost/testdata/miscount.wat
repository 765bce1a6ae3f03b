;; A converter whose FROM_CONNECT answers its first call right (a null for each value) and every
;; later call with one value too few: a batch the host splits into several calls must fail as a
;; malformed result at the call that miscounts, not be taken short.
(module $miscount
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))
  (global $calls (mut i32) (i32.const 0))
  (data (i32.const 1024) "{\"abi\":1,\"plugins\":[{\"name\":\"Miscount\",\"class\":\"test.miscount.Miscount\",\"kind\":\"converter\",\"version\":\"1\",\"config\":[]}]}")
  (data (i32.const 2048) "{\"handle\":1}")

  (func (export "wc_abi_version") (result i32) (i32.const 1))

  ;; Memory as needed for the bytes up to $end; false if it cannot grow.
  (func $ensure (param $end i32) (result i32)
    (local $need i32)
    (local.set $need
      (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (return (i32.ne (memory.grow (local.get $need)) (i32.const -1)))))
    (i32.const 1))

  (func (export "wc_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (if (i32.eqz (call $ensure (i32.add (local.get $p) (local.get $n))))
      (then (return (i32.const 0))))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))

  (func (export "wc_free") (param i32 i32))

  (func (export "wc_describe") (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 119)))

  (func (export "wc_call") (param $h i32) (param $op i32) (param $p i32) (param $n i32) (result i64)
    (if (i32.eq (local.get $op) (i32.const 1)) ;; OPEN
      (then (return (i64.or (i64.shl (i64.const 2048) (i64.const 32)) (i64.const 12)))))
    (if (i32.eq (local.get $op) (i32.const 9)) ;; FROM_CONNECT
      (then (return (call $from_connect (local.get $p)))))
    (i64.const 0))

  ;; A bytes batch of nulls, one per value of the data batch at $p (one fewer after the first call),
  ;; written above the heap.
  (func $from_connect (param $p i32) (result i64)
    (local $c i32) (local $out i32) (local $w i32) (local $end i32)
    (local.set $c (i32.load (local.get $p)))
    (if (i32.gt_u (global.get $calls) (i32.const 0))
      (then (local.set $c (i32.sub (local.get $c) (i32.const 1)))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (local.set $out (global.get $heap))
    (local.set $end (i32.add (local.get $out) (i32.add (i32.const 4) (i32.shl (local.get $c) (i32.const 2)))))
    (if (i32.eqz (call $ensure (local.get $end))) (then unreachable))
    (i32.store (local.get $out) (local.get $c))
    (local.set $w (i32.add (local.get $out) (i32.const 4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $w) (local.get $end)))
        (i32.store (local.get $w) (i32.const -1))
        (local.set $w (i32.add (local.get $w) (i32.const 4)))
        (br $l)))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $end) (local.get $out)))))
)
