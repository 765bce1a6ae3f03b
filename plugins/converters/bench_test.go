//go:build !wasip1

package main

import (
	"testing"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

func BenchmarkJsonConverterFromConnectString(b *testing.B) {
	c := &jsonConverter{}
	_ = c.Configure(sdk.Config{}, false)
	v := sdk.String("a line of text as FileStreamSource reads it, about seventy bytes long")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.FromConnect("t", v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJsonConverterToConnectStruct(b *testing.B) {
	c := &jsonConverter{}
	_ = c.Configure(sdk.Config{}, false)
	in := []byte(`{"schema":` + personSchema + `,"payload":{"id":1,"name":"ann","tags":["a","b"],"counts":{"x":2}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ToConnect("t", in); err != nil {
			b.Fatal(err)
		}
	}
}
