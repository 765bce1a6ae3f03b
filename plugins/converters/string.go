package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

var stringInfo = sdk.Info{
	Name:    "StringConverter",
	Class:   "org.apache.kafka.connect.storage.StringConverter",
	Version: version,
	Config: []sdk.ConfigDef{
		{Name: "converter.encoding", Default: new("UTF8"), Importance: sdk.High, Group: "Converter", Order: 0, Width: "MEDIUM",
			DisplayName: "Encoding", Documentation: "The name of the Java character set to use for encoding strings as byte arrays."},
		converterTypeDef,
	},
}

// stringConverter is Kafka's org.apache.kafka.connect.storage.StringConverter, for UTF-8.
type stringConverter struct{}

func (c *stringConverter) Configure(cfg sdk.Config, isKey bool) error {
	switch enc := strings.ToUpper(strings.ReplaceAll(cfg.String("converter.encoding", "UTF8"), "-", "")); enc {
	case "UTF8":
		return nil
	default:
		return fmt.Errorf("StringConverter: converter.encoding %q is not supported: only UTF-8 is", cfg["converter.encoding"])
	}
}

func (c *stringConverter) FromConnect(topic string, v sdk.Data) ([]byte, error) {
	if v.IsNull() {
		return nil, nil
	}
	return sdk.AppendText(nil, v)
}

func (c *stringConverter) ToConnect(topic string, b []byte) (sdk.Data, error) {
	if b == nil {
		return sdk.Null(), nil
	}
	if !utf8.Valid(b) {
		return sdk.String(strings.ToValidUTF8(string(b), "\uFFFD")), nil
	}
	return sdk.Data{Tag: sdk.TagString, Bytes: b}, nil
}
