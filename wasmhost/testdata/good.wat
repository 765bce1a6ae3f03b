;; A conforming ABI v1 module (sdk/ABI.md) with three plugins:
;;   SeqSource      (source)    POLL returns batch.size records (default 2) numbered from 0
;;   CountSink      (sink)      PUT logs "put N records" at debug level
;;   EchoConverter  (converter) FROM_CONNECT / TO_CONNECT pass the bytes through
;; It exports _initialize and traps if the host calls anything before it, and, when a SeqSource
;; task is opened, logs its stored offset (offset_get, first with a too-small buffer) and its first
;; WASI preopen.
;;
;; Memory: 0..1023 scratch, 1024.. NUL-terminated static strings, 65536.. heap. wc_alloc bumps
;; $heap; results are built in the arena just above $heap and stay valid until the next call.
(module $good
  (import "wasmconnect" "log" (func $log (param i32 i32 i32)))
  (import "wasmconnect" "offset_get" (func $offset_get (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))

  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))
  (global $next_handle (mut i32) (i32.const 1))
  (global $batch (mut i32) (i32.const 2))
  (global $inited (mut i32) (i32.const 0))

  (data (i32.const 1024)
    "{\"abi\":1,\"plugins\":["
    "{\"name\":\"SeqSource\",\"class\":\"test.fixture.SeqSourceConnector\",\"aliases\":[\"SeqSourceConnector\"],"
    "\"kind\":\"source\",\"version\":\"0.1.0\",\"config\":["
    "{\"name\":\"topic\",\"type\":\"STRING\",\"required\":true,\"default_value\":null,\"importance\":\"HIGH\","
    "\"documentation\":\"Topic to write to\",\"group\":null,\"width\":\"NONE\",\"display_name\":\"topic\",\"dependents\":[],\"order\":-1},"
    "{\"name\":\"batch.size\",\"type\":\"INT\",\"required\":false,\"default_value\":\"2\",\"importance\":\"LOW\","
    "\"documentation\":\"Records per poll\",\"group\":null,\"width\":\"NONE\",\"display_name\":\"batch.size\",\"dependents\":[],\"order\":-1}]},"
    "{\"name\":\"CountSink\",\"class\":\"test.fixture.CountSinkConnector\",\"kind\":\"sink\",\"version\":\"0.1.0\",\"config\":[]},"
    "{\"name\":\"EchoConverter\",\"class\":\"test.fixture.EchoConverter\",\"aliases\":[\"Echo\"],\"kind\":\"converter\",\"version\":\"0.1.0\",\"config\":[]}"
    "]}\00")
  (data (i32.const 4096) "fixture-topic\00")
  (data (i32.const 4224) "value-\00")
  (data (i32.const 4352) "{\"fixture\":\"p\"}\00")
  (data (i32.const 4480) "{\"n\":\00")
  (data (i32.const 4608) "\"plugin\":\"\00")
  (data (i32.const 4736) "\"role\":\"task\"\00")
  (data (i32.const 4864) "\"batch.size\":\"\00")
  (data (i32.const 4992) "{\"handle\":\00")
  (data (i32.const 5120) "{\"errors\":{\"topic\":[\"must not be empty\"]}}\00")
  (data (i32.const 5248) "{\"errors\":{}}\00")
  (data (i32.const 5376) "\"topic\":\"\"\00")
  (data (i32.const 5504) "[{\"task\":\"0\"},{\"task\":\"1\"}]\00")
  (data (i32.const 5632) "stored offset \00")
  (data (i32.const 5760) "no stored offset\00")
  (data (i32.const 5888) "put \00")
  (data (i32.const 6016) " records\00")
  (data (i32.const 6144) "unknown op\00")
  (data (i32.const 6272) "preopen: \00")
  (data (i32.const 6400) "no preopen\00")
  (data (i32.const 6528) "out of memory\00")
  (data (i32.const 6656) "h\00")
  (data (i32.const 6784) "x\00")

  (func (export "_initialize") (global.set $inited (i32.const 1)))

  (func (export "wc_abi_version") (result i32) (i32.const 1))

  ;; ---- helpers -----------------------------------------------------------------------------

  (func $strlen (param $p i32) (result i32)
    (local $q i32)
    (local.set $q (local.get $p))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $l)))
    (i32.sub (local.get $q) (local.get $p)))

  ;; copy static string s to dst; returns the end
  (func $puts (param $dst i32) (param $s i32) (result i32)
    (local $n i32)
    (local.set $n (call $strlen (local.get $s)))
    (memory.copy (local.get $dst) (local.get $s) (local.get $n))
    (i32.add (local.get $dst) (local.get $n)))

  ;; write static string s as a wire str (u32 length + bytes); returns the end
  (func $putstr (param $dst i32) (param $s i32) (result i32)
    (i32.store (local.get $dst) (call $strlen (local.get $s)))
    (call $puts (i32.add (local.get $dst) (i32.const 4)) (local.get $s)))

  ;; decimal digits of v at dst; returns the end
  (func $itoa (param $dst i32) (param $v i32) (result i32)
    (local $n i32) (local $t i32) (local $end i32)
    (local.set $n (i32.const 1))
    (local.set $t (local.get $v))
    (block $d
      (loop $l
        (br_if $d (i32.lt_u (local.get $t) (i32.const 10)))
        (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $l)))
    (local.set $end (i32.add (local.get $dst) (local.get $n)))
    (local.set $t (local.get $end))
    (loop $w
      (local.set $t (i32.sub (local.get $t) (i32.const 1)))
      (i32.store8 (local.get $t) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $w (i32.gt_u (local.get $t) (local.get $dst))))
    (local.get $end))

  ;; parse the decimal digits at p
  (func $atoi (param $p i32) (result i32)
    (local $v i32) (local $c i32)
    (block $d
      (loop $l
        (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
        (br_if $d (i32.gt_u (local.get $c) (i32.const 9)))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10)) (local.get $c)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (local.get $v))

  ;; find static string s in [p, p+n); returns the address just after the match, or 0
  (func $find (param $p i32) (param $n i32) (param $s i32) (result i32)
    (local $m i32) (local $last i32) (local $i i32)
    (local.set $m (call $strlen (local.get $s)))
    (if (i32.lt_u (local.get $n) (local.get $m)) (then (return (i32.const 0))))
    (local.set $last (i32.sub (i32.add (local.get $p) (local.get $n)) (local.get $m)))
    (block $notfound
      (loop $l
        (br_if $notfound (i32.gt_u (local.get $p) (local.get $last)))
        (local.set $i (i32.const 0))
        (block $mismatch
          (loop $c
            (if (i32.eq (local.get $i) (local.get $m))
              (then (return (i32.add (local.get $p) (local.get $m)))))
            (br_if $mismatch
              (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i)))
                      (i32.load8_u (i32.add (local.get $s) (local.get $i)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $c)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  ;; grow memory so that [0, end) is addressable; 0 when it cannot
  (func $ensure (param $end i32) (result i32)
    (local $need i32)
    (local.set $need
      (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (return (i32.ne (memory.grow (local.get $need)) (i32.const -1)))))
    (i32.const 1))

  (func $arena (result i32)
    (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))

  (func $ok (param $p i32) (param $end i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $end) (local.get $p)))))

  (func $okstr (param $s i32) (result i64)
    (call $ok (local.get $s) (i32.add (local.get $s) (call $strlen (local.get $s)))))

  (func $fail (param $s i32) (result i64)
    (i64.or (call $okstr (local.get $s)) (i64.const 0x80000000)))

  (func $logstr (param $level i32) (param $s i32)
    (call $log (local.get $level) (local.get $s) (call $strlen (local.get $s))))

  ;; ---- ABI exports -------------------------------------------------------------------------

  (func (export "wc_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (call $arena))
    (if (i32.eqz (call $ensure (i32.add (local.get $p) (local.get $n))))
      (then (return (i32.const 0))))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))

  (func (export "wc_free") (param $p i32) (param $n i32)
    (if (i32.eq (i32.add (local.get $p) (local.get $n)) (global.get $heap))
      (then (global.set $heap (local.get $p)))))

  (func (export "wc_describe") (result i64)
    (if (i32.eqz (global.get $inited)) (then unreachable))
    (call $okstr (i32.const 1024)))

  (func (export "wc_call") (param $h i32) (param $op i32) (param $p i32) (param $n i32) (result i64)
    (if (i32.eqz (global.get $inited)) (then unreachable))
    block $unknown
    block $toc
    block $fromc
    block $flush
    block $put
    block $commit
    block $poll
    block $tc
    block $val
    block $close
    block $open
      local.get $op
      br_table $unknown $open $close $val $tc $poll $commit $put $flush $fromc $toc $unknown
    end
    (return (call $open (local.get $p) (local.get $n)))
    end
    (return (i64.const 0))
    end
    (return (call $validate (local.get $p) (local.get $n)))
    end
    (return (call $okstr (i32.const 5504)))
    end
    (return (call $poll))
    end
    (return (i64.const 0))
    end
    (return (call $put (local.get $p)))
    end
    (return (i64.const 0))
    end
    (return (call $from_connect (local.get $p) (local.get $n)))
    end
    (return (call $to_connect (local.get $p) (local.get $n)))
    end
    (call $fail (i32.const 6144)))

  ;; ---- operations --------------------------------------------------------------------------

  (func $open (param $p i32) (param $n i32) (result i64)
    (local $q i32) (local $h i32) (local $out i32) (local $end i32)
    (local.set $h (global.get $next_handle))
    (global.set $next_handle (i32.add (local.get $h) (i32.const 1)))
    (local.set $q (call $find (local.get $p) (local.get $n) (i32.const 4608)))
    (if (i32.and (i32.ne (local.get $q) (i32.const 0))
                 (i32.eq (i32.load8_u (local.get $q)) (i32.const 83))) ;; 'S'eqSource
      (then
        (if (call $find (local.get $p) (local.get $n) (i32.const 4736))
          (then (call $open_source_task (local.get $p) (local.get $n))))))
    (local.set $out (call $arena))
    (drop (call $ensure (i32.add (local.get $out) (i32.const 64))))
    (local.set $end (call $itoa (call $puts (local.get $out) (i32.const 4992)) (local.get $h)))
    (i32.store8 (local.get $end) (i32.const 125)) ;; }
    (call $ok (local.get $out) (i32.add (local.get $end) (i32.const 1))))

  (func $open_source_task (param $p i32) (param $n i32)
    (local $q i32) (local $buf i32) (local $r i32) (local $end i32)
    (local.set $q (call $find (local.get $p) (local.get $n) (i32.const 4864)))
    (if (local.get $q) (then (global.set $batch (call $atoi (local.get $q)))))
    (local.set $buf (call $arena))
    (drop (call $ensure (i32.add (local.get $buf) (i32.const 16384))))
    ;; the stored offset: ask with a 4-byte buffer, then again with the size the host reports
    (local.set $end (call $puts (local.get $buf) (i32.const 5632)))
    (local.set $r (call $offset_get (i32.const 4352) (call $strlen (i32.const 4352)) (local.get $end) (i32.const 4)))
    (if (i32.gt_s (local.get $r) (i32.const 4))
      (then (local.set $r
        (call $offset_get (i32.const 4352) (call $strlen (i32.const 4352)) (local.get $end) (local.get $r)))))
    (if (i32.lt_s (local.get $r) (i32.const 0))
      (then (call $logstr (i32.const 2) (i32.const 5760)))
      (else (call $log (i32.const 2) (local.get $buf)
                       (i32.sub (i32.add (local.get $end) (local.get $r)) (local.get $buf)))))
    ;; the first preopened directory (fd 3), as WASI presents it
    (local.set $end (call $puts (local.get $buf) (i32.const 6272)))
    (if (i32.eqz (call $fd_prestat_get (i32.const 3) (i32.add (local.get $buf) (i32.const 8192))))
      (then
        (local.set $r (i32.load (i32.add (local.get $buf) (i32.const 8196))))
        (drop (call $fd_prestat_dir_name (i32.const 3) (local.get $end) (local.get $r)))
        (call $log (i32.const 2) (local.get $buf)
                   (i32.sub (i32.add (local.get $end) (local.get $r)) (local.get $buf))))
      (else (call $logstr (i32.const 2) (i32.const 6400)))))

  (func $validate (param $p i32) (param $n i32) (result i64)
    (if (call $find (local.get $p) (local.get $n) (i32.const 5376))
      (then (return (call $okstr (i32.const 5120)))))
    (call $okstr (i32.const 5248)))

  ;; record i: topic fixture-topic, partition -1, offset -1, timestamp 1700000000000+i, key null,
  ;; value "value-<i>", header h=bytes "x", source partition {"fixture":"p"}, offset {"n":<i+1>}
  (func $poll (result i64)
    (local $out i32) (local $w i32) (local $i i32) (local $n i32) (local $lenp i32) (local $s i32)
    (local.set $n (global.get $batch))
    (local.set $out (call $arena))
    (if (i32.eqz (call $ensure (i32.add (local.get $out) (i32.add (i32.const 16) (i32.mul (local.get $n) (i32.const 160))))))
      (then (return (call $fail (i32.const 6528)))))
    (i32.store (local.get $out) (local.get $n))
    (local.set $w (i32.add (local.get $out) (i32.const 4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $w (call $putstr (local.get $w) (i32.const 4096)))
        (i32.store (local.get $w) (i32.const -1))
        (i64.store (i32.add (local.get $w) (i32.const 4)) (i64.const -1))
        (i64.store (i32.add (local.get $w) (i32.const 12))
                   (i64.add (i64.const 1700000000000) (i64.extend_i32_u (local.get $i))))
        (i32.store8 (i32.add (local.get $w) (i32.const 20)) (i32.const 0))
        (i32.store8 (i32.add (local.get $w) (i32.const 21)) (i32.const 2))
        (local.set $lenp (i32.add (local.get $w) (i32.const 22)))
        (local.set $s (i32.add (local.get $lenp) (i32.const 4)))
        (local.set $w (call $itoa (call $puts (local.get $s) (i32.const 4224)) (local.get $i)))
        (i32.store (local.get $lenp) (i32.sub (local.get $w) (local.get $s)))
        (i32.store (local.get $w) (i32.const 1))
        (local.set $w (call $putstr (i32.add (local.get $w) (i32.const 4)) (i32.const 6656)))
        (i32.store8 (local.get $w) (i32.const 1))
        (local.set $w (call $putstr (i32.add (local.get $w) (i32.const 1)) (i32.const 6784)))
        (local.set $w (call $putstr (local.get $w) (i32.const 4352)))
        (local.set $lenp (local.get $w))
        (local.set $s (i32.add (local.get $w) (i32.const 4)))
        (local.set $w (call $itoa (call $puts (local.get $s) (i32.const 4480)) (i32.add (local.get $i) (i32.const 1))))
        (i32.store8 (local.get $w) (i32.const 125))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (i32.store (local.get $lenp) (i32.sub (local.get $w) (local.get $s)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (call $ok (local.get $out) (local.get $w)))

  (func $put (param $p i32) (result i64)
    (local $out i32) (local $end i32)
    (local.set $out (call $arena))
    (drop (call $ensure (i32.add (local.get $out) (i32.const 64))))
    (local.set $end
      (call $puts (call $itoa (call $puts (local.get $out) (i32.const 5888)) (i32.load (local.get $p)))
                  (i32.const 6016)))
    (call $log (i32.const 1) (local.get $out) (i32.sub (local.get $end) (local.get $out)))
    (i64.const 0))

  ;; data batch -> bytes batch: null stays null, bytes and strings pass through, JSON gives its payload
  (func $from_connect (param $p i32) (param $n i32) (result i64)
    (local $out i32) (local $w i32) (local $c i32) (local $i i32) (local $tag i32) (local $len i32)
    (local.set $out (call $arena))
    (if (i32.eqz (call $ensure (i32.add (local.get $out) (i32.add (local.get $n) (i32.const 16)))))
      (then (return (call $fail (i32.const 6528)))))
    (local.set $c (i32.load (local.get $p)))
    (i32.store (local.get $out) (local.get $c))
    (local.set $w (i32.add (local.get $out) (i32.const 4)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $c)))
        (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))
        (local.set $tag (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.eqz (local.get $tag))
          (then
            (i32.store (local.get $w) (i32.const -1))
            (local.set $w (i32.add (local.get $w) (i32.const 4))))
          (else
            (if (i32.eq (local.get $tag) (i32.const 3))
              (then (local.set $p (i32.add (local.get $p) (i32.add (i32.const 4) (i32.load (local.get $p)))))))
            (local.set $len (i32.add (i32.const 4) (i32.load (local.get $p))))
            (memory.copy (local.get $w) (local.get $p) (local.get $len))
            (local.set $w (i32.add (local.get $w) (local.get $len)))
            (local.set $p (i32.add (local.get $p) (local.get $len)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (call $ok (local.get $out) (local.get $w)))

  ;; bytes batch with topics -> data batch: null stays null, bytes become BYTES values
  (func $to_connect (param $p i32) (param $n i32) (result i64)
    (local $out i32) (local $w i32) (local $c i32) (local $i i32) (local $len i32)
    (local.set $out (call $arena))
    (if (i32.eqz (call $ensure (i32.add (local.get $out) (i32.add (i32.shl (local.get $n) (i32.const 1)) (i32.const 16)))))
      (then (return (call $fail (i32.const 6528)))))
    (local.set $c (i32.load (local.get $p)))
    (i32.store (local.get $out) (local.get $c))
    (local.set $w (i32.add (local.get $out) (i32.const 4)))
    (local.set $p (i32.add (local.get $p) (i32.const 4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $c)))
        (local.set $len (i32.add (i32.const 4) (i32.load (local.get $p))))
        (memory.copy (local.get $w) (local.get $p) (local.get $len))
        (local.set $w (i32.add (local.get $w) (local.get $len)))
        (local.set $p (i32.add (local.get $p) (local.get $len)))
        (local.set $len (i32.load (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (if (i32.eq (local.get $len) (i32.const -1))
          (then
            (i32.store8 (local.get $w) (i32.const 0))
            (local.set $w (i32.add (local.get $w) (i32.const 1))))
          (else
            (i32.store8 (local.get $w) (i32.const 1))
            (i32.store (i32.add (local.get $w) (i32.const 1)) (local.get $len))
            (memory.copy (i32.add (local.get $w) (i32.const 5)) (local.get $p) (local.get $len))
            (local.set $w (i32.add (local.get $w) (i32.add (local.get $len) (i32.const 5))))
            (local.set $p (i32.add (local.get $p) (local.get $len)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (call $ok (local.get $out) (local.get $w)))
)
