;; A well-formed module that claims the class of good.wat's SeqSource.
(module
  (memory (export "memory") 1)
  (data (i32.const 16)
    "{\"abi\":1,\"plugins\":[{\"name\":\"OtherSeq\",\"class\":\"test.fixture.SeqSourceConnector\","
    "\"kind\":\"source\",\"version\":\"9.9.9\",\"config\":[]}]}")  ;; 129 bytes
  (func (export "wc_abi_version") (result i32) (i32.const 1))
  (func (export "wc_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "wc_free") (param i32 i32))
  (func (export "wc_describe") (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 129)))
  (func (export "wc_call") (param i32 i32 i32 i32) (result i64) (i64.const 0)))
