;; A transformation and predicate fixture (sdk/ABI.md §5.6, §5.7) that answers with canned results:
;;   Canned     (transformation) TRANSFORM of 4 records returns: two records from input 0 (a split:
;;              topic t2 partition 5 timestamp 7, and topic t3), input 1 dropped, input 2 FAILED
;;              (class C, "bad record"), input 3 UNCHANGED
;;   Malformed  (transformation) TRANSFORM returns entries out of input order
;;   Even       (predicate)      TEST of 3 records returns match, no match, failed (C, "cannot test")
;; OPEN returns handle 2 for Malformed, 3 for Even and 1 otherwise.
(module $transform
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 8192))
  (data (i32.const 16) "{\"abi\":1,\"plugins\":[{\"name\":\"Canned\",\"class\":\"test.fixture.Canned\",\"kind\":\"transformation\",\"version\":\"0.1.0\",\"config\":[]},{\"name\":\"Malformed\",\"class\":\"test.fixture.Malformed\",\"kind\":\"transformation\",\"version\":\"0.1.0\",\"config\":[]},{\"name\":\"Even\",\"class\":\"test.fixture.Even\",\"kind\":\"predicate\",\"version\":\"0.1.0\",\"config\":[]}]}")
  (data (i32.const 1024) "\04\00\00\00\00\00\00\00\00\02\00\00\00\74\32\05\00\00\00\ff\ff\ff\ff\ff\ff\ff\ff\07\00\00\00\00\00\00\00\00\02\01\00\00\00\76\01\00\00\00\01\00\00\00\68\02\01\00\00\00\78\00\00\00\00\00\00\00\00\00\00\00\00\00\02\00\00\00\74\33\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\ff\00\02\01\00\00\00\77\01\00\00\00\01\00\00\00\68\02\01\00\00\00\78\00\00\00\00\00\00\00\00\02\00\00\00\01\01\00\00\00\43\0a\00\00\00\62\61\64\20\72\65\63\6f\72\64\03\00\00\00\02")
  (data (i32.const 2048) "\02\00\00\00\01\00\00\00\02\00\00\00\00\02")
  (data (i32.const 3072) "\03\00\00\00\01\00\02\01\00\00\00\43\0b\00\00\00\63\61\6e\6e\6f\74\20\74\65\73\74")
  (data (i32.const 4096) "{\"handle\":1}")
  (data (i32.const 4112) "{\"handle\":2}")
  (data (i32.const 4128) "{\"handle\":3}")
  (data (i32.const 4144) "unknown op")

  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))
  (func (export "wc_free") (param i32 i32))
  (func $res (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32)) (i64.extend_i32_u (local.get $n))))
  (func (export "wc_describe") (result i64) (call $res (i32.const 16) (i32.const 324)))
  ;; contains reports whether [p, p+n) contains the byte c
  (func $contains (param $p i32) (param $n i32) (param $c i32) (result i32)
    (block $no
      (loop $l
        (br_if $no (i32.eqz (local.get $n)))
        (if (i32.eq (i32.load8_u (local.get $p)) (local.get $c)) (then (return (i32.const 1))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (i32.const 0))
  (func (export "wc_call") (param $h i32) (param $op i32) (param $p i32) (param $n i32) (result i64)
    (if (i32.eq (local.get $op) (i32.const 1)) (then
      ;; "Malformed" is the only name with an M, "Even" the only one with an E
      (if (call $contains (local.get $p) (local.get $n) (i32.const 77))
        (then (return (call $res (i32.const 4112) (i32.const 12)))))
      (if (call $contains (local.get $p) (local.get $n) (i32.const 69))
        (then (return (call $res (i32.const 4128) (i32.const 12)))))
      (return (call $res (i32.const 4096) (i32.const 12)))))
    (if (i32.eq (local.get $op) (i32.const 2)) (then (return (i64.const 0))))
    (if (i32.eq (local.get $op) (i32.const 11)) (then
      (if (i32.eq (local.get $h) (i32.const 2))
        (then (return (call $res (i32.const 2048) (i32.const 14)))))
      (return (call $res (i32.const 1024) (i32.const 155)))))
    (if (i32.eq (local.get $op) (i32.const 12)) (then
      (return (call $res (i32.const 3072) (i32.const 27)))))
    (i64.or (call $res (i32.const 4144) (i32.const 10)) (i64.const 0x80000000)))
)
