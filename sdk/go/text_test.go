package sdk

import "testing"

func TestAppendText(t *testing.T) {
	for _, tc := range []struct {
		in   Data
		want string
	}{
		{Null(), "null"},
		{String("héllo"), "héllo"},
		{Bytes([]byte{0xff, 'a'}), "\xffa"},
		{JSON(nil, []byte(`"plain"`)), "plain"},
		{JSON([]byte(`{"type":"string"}`), []byte(`"a\"b\n"`)), "a\"b\n"},
		{JSON(nil, []byte(`{"a":1}`)), `{"a":1}`},
		{JSON(nil, []byte(` 42 `)), "42"},
		{JSON(nil, nil), "null"},
	} {
		got, err := AppendText([]byte(">"), tc.in)
		if err != nil || string(got) != ">"+tc.want {
			t.Errorf("AppendText(%+v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := AppendText(nil, JSON(nil, []byte(`"bad\x"`))); err == nil {
		t.Error("bad JSON string accepted")
	}
}
