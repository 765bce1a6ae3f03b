package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// marshal encodes v like Jackson: compact, no HTML escaping, no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// readBody reads the request body up to the server's limit.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	tooLarge := &connect.Error{
		Code:    http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("Request body is too large: the limit is %d bytes", s.maxBody),
	}
	if r.ContentLength > s.maxBody {
		return nil, tooLarge
	}
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody+1))
	if err != nil {
		return nil, connect.BadRequest("Could not read the request body: %v", err)
	}
	if int64(len(b)) > s.maxBody {
		return nil, tooLarge
	}
	return b, nil
}

// jsonKind names the JSON type of a raw value by its first byte.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeObject parses a request body that must be one JSON object, into its members. The errors are
// 400s that name the problem: empty body, malformed JSON (with line and column), or another JSON type.
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) // a UTF-8 BOM, which Jackson accepts
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, connect.BadRequest("Request body is empty: expected a JSON object")
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, syntaxError(body, err)
	}
	if k := jsonKind(raw); k != "object" {
		return nil, connect.BadRequest("Invalid request body: expected a JSON object, got %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, syntaxError(body, err)
	}
	return m, nil
}

// syntaxError turns a JSON decoding error into a 400 with the position of the problem.
func syntaxError(body []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return connect.BadRequest("Invalid JSON in request body: %v", err)
	}
	off := int(se.Offset)
	// Offset counts the bytes read, including the offending one; point at it, or just past the end
	// when the input stopped early.
	if off > 0 && off <= len(body) && !strings.HasPrefix(se.Error(), "unexpected end") {
		off--
	}
	if off > len(body) {
		off = len(body)
	}
	line := 1 + bytes.Count(body[:off], []byte("\n"))
	col := off + 1
	if nl := bytes.LastIndexByte(body[:off], '\n'); nl >= 0 {
		col = off - nl
	}
	return connect.BadRequest("Invalid JSON in request body: %s (line %d, column %d)", se.Error(), line, col)
}

// decodeString decodes an optional string member; absent or null gives ok=false.
func decodeString(m map[string]json.RawMessage, key string) (s string, ok bool, err error) {
	raw, found := m[key]
	if !found || jsonKind(raw) == "null" {
		return "", false, nil
	}
	if k := jsonKind(raw); k != "string" {
		return "", false, connect.BadRequest("%q must be a string, got %s", key, k)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, connect.BadRequest("Invalid JSON in request body: %v", err)
	}
	return s, true, nil
}

// configValue reads one config value as Kafka's Jackson reads a String: a JSON string as is, a number
// as written ("tasks.max": 1 is "1", 1.50 is "1.50"), a boolean as "true" or "false". null gives
// isNull; objects and arrays are 400s that name the key.
func configValue(key string, raw json.RawMessage) (v string, isNull bool, err error) {
	switch kind := jsonKind(raw); kind {
	case "string":
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, connect.BadRequest("Invalid JSON in request body: %v", err)
		}
		return v, false, nil
	case "number", "boolean":
		return string(bytes.TrimSpace(raw)), false, nil
	case "null":
		return "", true, nil
	default:
		return "", false, connect.BadRequest("config value for %q must be a string, got %s", key, kind)
	}
}

// decodeConfig turns the members of a config object into a flat string map. Values are strings,
// numbers or booleans (see configValue); null, objects and arrays are 400s naming the first offending
// key in sorted order.
func decodeConfig(m map[string]json.RawMessage) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, isNull, err := configValue(k, m[k])
		if err != nil {
			return nil, err
		}
		if isNull {
			return nil, connect.BadRequest("config value for %q must be a string, got null", k)
		}
		out[k] = v
	}
	return out, nil
}

// createRequest is the body of POST /connectors.
type createRequest struct {
	name    string
	config  map[string]string
	initial connect.TargetState
}

// decodeCreate parses POST /connectors: {"name","config","initial_state"}; other members are ignored.
func decodeCreate(body []byte) (createRequest, error) {
	m, err := decodeObject(body)
	if err != nil {
		return createRequest{}, err
	}
	var req createRequest
	name, _, err := decodeString(m, "name")
	if err != nil {
		return req, err
	}
	req.name = strings.TrimSpace(name)

	rawCfg, found := m["config"]
	if !found || jsonKind(rawCfg) == "null" {
		return req, connect.BadRequest(`Connector config is missing: the request body must have a "config" object`)
	}
	if k := jsonKind(rawCfg); k != "object" {
		return req, connect.BadRequest(`"config" must be a JSON object, got %s`, k)
	}
	var cfgMembers map[string]json.RawMessage
	if err := json.Unmarshal(rawCfg, &cfgMembers); err != nil {
		return req, syntaxError(body, err)
	}
	if req.config, err = decodeConfig(cfgMembers); err != nil {
		return req, err
	}

	state, _, err := decodeString(m, "initial_state")
	if err != nil {
		return req, err
	}
	if req.initial, err = connect.ParseInitialState(state); err != nil {
		return req, err
	}
	return req, nil
}

// decodeFlatConfig parses the body of PUT /connectors/{name}/config: a flat object of strings.
func decodeFlatConfig(body []byte) (map[string]string, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	return decodeConfig(m)
}

// checkAndPutName is Kafka's checkAndPutConnectorConfigName: a "name" in the config must equal the
// connector's name; a missing one is added.
func checkAndPutName(name string, config map[string]string) error {
	if included, ok := config["name"]; ok {
		if included != name {
			return connect.BadRequest("Connector name configuration (%s) doesn't match connector name in the URL (%s)", included, name)
		}
		return nil
	}
	config["name"] = name
	return nil
}

// validateName applies Kafka's rule for connector names (non-empty, no ISO control characters) with
// Kafka's wording, and rejects '/', which no URL path could address.
func validateName(name string) error {
	invalid := func(msg string) error {
		return connect.BadRequest("Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value %s for configuration name: %s\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
			name, msg)
	}
	if name == "" {
		return invalid("String may not be empty")
	}
	var ctl []string
	for _, c := range name {
		if unicode.IsControl(c) {
			ctl = append(ctl, fmt.Sprint(int(c)))
		}
	}
	if len(ctl) > 0 {
		return invalid("String may not contain control sequences but had the following ASCII chars: " + strings.Join(ctl, ", "))
	}
	if strings.Contains(name, "/") {
		return connect.BadRequest("Connector name %q is invalid: it contains '/', so no URL path could address it", name)
	}
	return nil
}

// decodePatch parses the body of PATCH /connectors/{name}/config: a flat object whose null values
// remove keys (nil in the result).
func decodePatch(body []byte) (map[string]*string, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, isNull, err := configValue(k, m[k])
		if err != nil {
			return nil, err
		}
		if isNull {
			out[k] = nil
			continue
		}
		out[k] = &v
	}
	return out, nil
}

// errNoOffsets is Kafka's 400 for a PATCH /connectors/{name}/offsets without offsets.
var errNoOffsets = connect.BadRequest("Partitions / offsets need to be provided for an alter offsets request")

// decodeOffsets parses the body of PATCH /connectors/{name}/offsets:
// {"offsets":[{"partition":{...},"offset":{...}|null}]}. Numbers are kept as json.Number. A missing,
// null or empty list is Kafka's 400; a partition or offset that is neither an object nor null is a 400.
func decodeOffsets(body []byte) ([]connect.ConnectorOffset, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	raw, found := m["offsets"]
	if !found || jsonKind(raw) == "null" {
		return nil, errNoOffsets
	}
	if k := jsonKind(raw); k != "array" {
		return nil, connect.BadRequest(`"offsets" must be a JSON array, got %s`, k)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, syntaxError(body, err)
	}
	if len(elems) == 0 {
		return nil, errNoOffsets
	}
	out := make([]connect.ConnectorOffset, 0, len(elems))
	for i, e := range elems {
		if k := jsonKind(e); k != "object" {
			return nil, connect.BadRequest(`"offsets"[%d] must be a JSON object, got %s`, i, k)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(e, &members); err != nil {
			return nil, syntaxError(body, err)
		}
		var o connect.ConnectorOffset
		for _, f := range []struct {
			key string
			dst *map[string]any
		}{{"partition", &o.Partition}, {"offset", &o.Offset}} {
			v, ok := members[f.key]
			if !ok || jsonKind(v) == "null" {
				continue
			}
			if k := jsonKind(v); k != "object" {
				return nil, connect.BadRequest(`"offsets"[%d].%s must be a JSON object or null, got %s`, i, f.key, k)
			}
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			if err := dec.Decode(f.dst); err != nil {
				return nil, connect.BadRequest("Invalid JSON in request body: %v", err)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// decodeLevel parses the body of PUT /admin/loggers/{name}: {"level":"DEBUG"}. Like Kafka, a missing
// or null level is a 400 and other members are ignored; the level itself is checked by the caller.
func decodeLevel(body []byte) (string, error) {
	m, err := decodeObject(body)
	if err != nil {
		return "", err
	}
	raw, found := m["level"]
	if !found {
		return "", connect.BadRequest("Desired 'level' parameter was not specified in request.")
	}
	v, isNull, err := configValue("level", raw)
	if err != nil {
		return "", connect.BadRequest(`"level" must be a string, got %s`, jsonKind(raw))
	}
	if isNull {
		return "", connect.BadRequest("Desired 'level' parameter was not specified in request.")
	}
	return v, nil
}
