package main

import sdk "github.com/wasmconnect/wasmconnect/sdk/go"

const version = "1.0.0"

func init() {
	sdk.RegisterSource(sourceInfo, fileSource{})
	sdk.RegisterSink(sinkInfo, fileSink{})
}

func main() {}
