package main

import sdk "github.com/wasmconnect/wasmconnect/sdk/go"

const version = "1.0.0"

func init() {
	sdk.RegisterConverter(jsonInfo, func() sdk.Converter { return &jsonConverter{} })
	sdk.RegisterConverter(stringInfo, func() sdk.Converter { return &stringConverter{} })
	sdk.RegisterConverter(byteArrayInfo, func() sdk.Converter { return &byteArrayConverter{} })
}

func main() {}
