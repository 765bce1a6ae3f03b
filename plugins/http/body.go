package main

import (
	"encoding/base64"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// appendBody appends the request body of records to dst: a JSON array of their JSON, or their
// text (or JSON) joined with the separator between the prefix and the suffix.
func (s *settings) appendBody(dst []byte, records []*sdk.SinkRecord) []byte {
	if s.asArray {
		dst = append(dst, '[')
		for i, r := range records {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, r.Value)
		}
		return append(dst, ']')
	}
	dst = append(dst, s.prefix...)
	for i, r := range records {
		if i > 0 {
			dst = append(dst, s.separator...)
		}
		if s.json {
			dst = appendJSON(dst, r.Value)
		} else {
			dst = appendText(dst, r.Value)
		}
	}
	return append(dst, s.suffix...)
}

// contentType is the Content-Type of the bodies, unless headers sets one.
func (s *settings) contentType() string {
	if s.asArray || s.json {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// appendJSON appends v as JsonConverter writes a value without its schema: the payload of a JSON
// value, a string as a JSON string, bytes in base64.
func appendJSON(dst []byte, v sdk.Data) []byte {
	switch v.Tag {
	case sdk.TagJSON:
		return append(dst, v.Bytes...)
	case sdk.TagString:
		return connect.AppendJSONString(dst, v.Bytes)
	case sdk.TagBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes)
		return append(dst, '"')
	}
	return append(dst, "null"...)
}

// appendText appends the text of v: a string or bytes as they are, a JSON value as its payload.
func appendText(dst []byte, v sdk.Data) []byte {
	if v.Tag == sdk.TagNull {
		return append(dst, "null"...)
	}
	return append(dst, v.Bytes...)
}
