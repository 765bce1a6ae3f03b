package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

var byteArrayInfo = sdk.Info{
	Name:    "ByteArrayConverter",
	Class:   "org.apache.kafka.connect.converters.ByteArrayConverter",
	Version: version,
	Config:  []sdk.ConfigDef{converterTypeDef},
}

// byteArrayConverter is Kafka's org.apache.kafka.connect.converters.ByteArrayConverter: bytes pass
// through unchanged.
type byteArrayConverter struct{}

func (c *byteArrayConverter) Configure(sdk.Config, bool) error { return nil }

func (c *byteArrayConverter) FromConnect(topic string, v sdk.Data) ([]byte, error) {
	switch v.Tag {
	case sdk.TagNull:
		return nil, nil
	case sdk.TagBytes:
		if v.Bytes == nil {
			return []byte{}, nil
		}
		return v.Bytes, nil
	case sdk.TagString:
		return nil, incompatible("java.lang.String")
	case sdk.TagJSON:
		var head struct {
			Type string `json:"type"`
		}
		if len(v.Schema) > 0 {
			if err := json.Unmarshal(v.Schema, &head); err != nil {
				return nil, fmt.Errorf("ByteArrayConverter: invalid schema: %w", err)
			}
		}
		p := bytes.TrimSpace(v.Bytes)
		if head.Type == "bytes" {
			var s *string
			if err := json.Unmarshal(p, &s); err != nil {
				return nil, fmt.Errorf("ByteArrayConverter: invalid bytes payload: %w", err)
			}
			if s == nil {
				return nil, nil
			}
			return base64.StdEncoding.DecodeString(*s)
		}
		if head.Type != "" && head.Type != "null" {
			return nil, fmt.Errorf("Invalid schema type for ByteArrayConverter: %s", connect.Type(head.Type).JavaName())
		}
		return nil, incompatible(javaClass(p))
	}
	return nil, fmt.Errorf("ByteArrayConverter: unknown data tag %d", v.Tag)
}

func incompatible(class string) error {
	return fmt.Errorf("ByteArrayConverter is not compatible with objects of type class %s", class)
}

// javaClass names the Java class JsonConverter would produce for a schemaless JSON payload.
func javaClass(p []byte) string {
	if len(p) == 0 {
		return "java.lang.Object"
	}
	switch p[0] {
	case '"':
		return "java.lang.String"
	case '{':
		return "java.util.HashMap"
	case '[':
		return "java.util.ArrayList"
	case 't', 'f':
		return "java.lang.Boolean"
	}
	if bytes.ContainsAny(p, ".eE") {
		return "java.lang.Double"
	}
	return "java.lang.Long"
}

func (c *byteArrayConverter) ToConnect(topic string, b []byte) (sdk.Data, error) {
	if b == nil {
		return sdk.Null(), nil
	}
	return sdk.Bytes(b), nil
}
