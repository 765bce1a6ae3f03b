package main

import (
	"bytes"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

func registerFieldTransforms() {
	kv("InsertField", func(key bool) sdk.Transformation { return &insertField{key: operand(key)} },
		sdk.ConfigDef{Name: "topic.field", Importance: sdk.Medium, Documentation: "Field name for Kafka topic. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		sdk.ConfigDef{Name: "partition.field", Importance: sdk.Medium, Documentation: "Field name for Kafka partition. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		sdk.ConfigDef{Name: "offset.field", Importance: sdk.Medium, Documentation: "Field name for Kafka offset - only applicable to sink connectors.<br/>Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		sdk.ConfigDef{Name: "timestamp.field", Importance: sdk.Medium, Documentation: "Field name for record timestamp. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		sdk.ConfigDef{Name: "static.field", Importance: sdk.Medium, Documentation: "Field name for static data field. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		sdk.ConfigDef{Name: "static.value", Importance: sdk.Medium, Documentation: "Static field value, if field name configured."},
		replaceNullDef)
	kv("ReplaceField", func(key bool) sdk.Transformation { return &replaceField{key: operand(key)} },
		sdk.ConfigDef{Name: "exclude", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Documentation: "Fields to exclude. This takes precedence over the fields to include."},
		sdk.ConfigDef{Name: "include", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Documentation: "Fields to include. If specified, only these fields will be used."},
		sdk.ConfigDef{Name: "renames", Type: sdk.TypeList, Default: new(""), Importance: sdk.Medium, Documentation: "Field rename mappings.",
			Validator: validRenames},
		replaceNullDef)
	kv("MaskField", func(key bool) sdk.Transformation { return &maskField{key: operand(key)} },
		sdk.ConfigDef{Name: "fields", Type: sdk.TypeList, Required: true, Importance: sdk.High, Documentation: "Names of fields to mask.", Validator: listNonEmpty("fields")},
		sdk.ConfigDef{Name: "replacement", Importance: sdk.Low, Documentation: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only).", Validator: nonEmptyString},
		replaceNullDef)
	sdk.RegisterTransformation(info("ValueToKey", "",
		sdk.ConfigDef{Name: "fields", Type: sdk.TypeList, Required: true, Importance: sdk.High, Documentation: "Field names on the record value to extract as the record key.", Validator: listNonEmpty("fields")},
		replaceNullDef), func() sdk.Transformation { return &valueToKey{} })
	kv("ExtractField", func(key bool) sdk.Transformation { return &extractField{key: operand(key)} },
		sdk.ConfigDef{Name: "field", Required: true, Importance: sdk.Medium, Documentation: "Field name to extract."},
		sdk.ConfigDef{Name: "field.syntax.version", Default: new("V1"), Importance: sdk.High, Validator: sdk.OneOfIgnoreCase("V1", "V2"),
			Documentation: "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used."},
		replaceNullDef)
	kv("HoistField", func(key bool) sdk.Transformation { return &hoistField{key: operand(key)} },
		sdk.ConfigDef{Name: "field", Required: true, Importance: sdk.Medium, Documentation: "Field name for the single field that will be created in the resulting Struct or Map."})
}

// ---- InsertField ----------------------------------------------------------------------------

type insertSpec struct {
	name     string
	optional bool
}

func parseInsertSpec(v string) *insertSpec {
	if v == "" {
		return nil
	}
	switch {
	case strings.HasSuffix(v, "?"):
		return &insertSpec{v[:len(v)-1], true}
	case strings.HasSuffix(v, "!"):
		return &insertSpec{v[:len(v)-1], false}
	}
	return &insertSpec{v, true}
}

type insertField struct {
	nulls                                 nullPolicy
	key                                   operand
	topic, partition, offset, ts, staticF *insertSpec
	staticValue                           any  // nil: unset
	slow                                  bool // tests: never take the textual fast path
	cache                                 schemaCache
}

const insertPurpose = "field insertion"

func (t *insertField) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.topic = parseInsertSpec(cfg["topic.field"])
	t.partition = parseInsertSpec(cfg["partition.field"])
	t.offset = parseInsertSpec(cfg["offset.field"])
	t.ts = parseInsertSpec(cfg["timestamp.field"])
	t.staticF = parseInsertSpec(cfg["static.field"])
	if v, ok := cfg["static.value"]; ok {
		t.staticValue = v
	}
	return nil // like Kafka's, an InsertField without fields inserts nothing
}

func (t *insertField) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		return r, nil
	}
	if t.offset != nil && !isSink(r) {
		return nil, sdk.DataError("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", insertPurpose)
	}
	var partition, timestamp any
	if r.Partition >= 0 {
		partition = r.Partition
	}
	if r.Timestamp >= 0 {
		timestamp = r.Timestamp
	}
	if !t.slow {
		if ok, err := t.appendFast(r, partition, timestamp); ok || err != nil {
			return r, err
		}
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if s == nil {
		m, err := requireMap(v, insertPurpose)
		if err != nil {
			return nil, err
		}
		m = copyMap(m)
		if t.topic != nil {
			m[t.topic.name] = r.Topic
		}
		if t.partition != nil {
			m[t.partition.name] = partition
		}
		if t.offset != nil {
			m[t.offset.name] = r.Offset
		}
		if t.ts != nil {
			m[t.ts.name] = timestamp
		}
		if t.staticF != nil {
			m[t.staticF.name] = t.static()
		}
		return r, t.key.encode(r, nil, m)
	}
	st, err := requireStruct(v, insertPurpose)
	if err != nil {
		return nil, err
	}
	return t.applyStruct(r, s, st, partition, timestamp)
}

// appendFast inserts the fields into a struct payload as text when it can: the payload is a JSON
// object of a struct schema and nulls need no defaults. It saves decoding and encoding every field of
// every record, most of InsertField's cost; the result is what applyStruct writes, up to the order
// and spacing of the original fields. It returns false to take the slow path.
func (t *insertField) appendFast(r *sdk.Record, partition, timestamp any) (bool, error) {
	d := t.key.get(r)
	if d.Tag != sdk.TagJSON || len(d.Schema) == 0 || t.nulls.keep {
		return false, nil
	}
	p := bytes.TrimSpace(d.Bytes)
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' {
		return false, nil
	}
	s, err := connect.ParseSchema(d.Schema)
	if err != nil || s == nil || s.Type != connect.TypeStruct {
		return false, nil
	}
	us, err := t.cache.get(s, t.updatedSchema)
	if err != nil {
		return false, err
	}
	raw, err := us.JSON()
	if err != nil {
		return false, err
	}
	out := make([]byte, 0, len(p)+64)
	out = append(out, p[:len(p)-1]...)
	empty := len(bytes.TrimSpace(p[1:len(p)-1])) == 0
	n := len(s.Fields)
	add := func(v any) error {
		if !empty || n > len(s.Fields) {
			out = append(out, ',')
		}
		f := us.Fields[n]
		n++
		out, _ = connect.AppendJSON(out, nil, f.Name) // a string: cannot fail
		out = append(out, ':')
		var err error
		out, err = connect.AppendFieldJSON(out, f.Name, f.Schema, v)
		return err
	}
	var vals []any
	if t.topic != nil {
		vals = append(vals, r.Topic)
	}
	if t.partition != nil {
		vals = append(vals, partition)
	}
	if t.offset != nil {
		vals = append(vals, r.Offset)
	}
	if t.ts != nil {
		if timestamp != nil {
			vals = append(vals, time.UnixMilli(r.Timestamp).UTC())
		} else {
			vals = append(vals, nil)
		}
	}
	if t.staticF != nil {
		vals = append(vals, t.static())
	}
	for _, v := range vals {
		if err := add(v); err != nil {
			return false, sdk.DataError("%v", err)
		}
	}
	t.key.set(r, sdk.JSON(raw, append(out, '}')))
	return true, nil
}

func (t *insertField) applyStruct(r *sdk.Record, s *connect.Schema, st *connect.Struct, partition, timestamp any) (*sdk.Record, error) {
	us, err := t.cache.get(s, t.updatedSchema)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(us)
	n := len(s.Fields)
	for i := range n {
		out.PutAt(i, st.GetAt(i))
	}
	if t.topic != nil {
		out.PutAt(n, r.Topic)
		n++
	}
	if t.partition != nil {
		out.PutAt(n, partition)
		n++
	}
	if t.offset != nil {
		out.PutAt(n, r.Offset)
		n++
	}
	if t.ts != nil {
		if timestamp != nil {
			out.PutAt(n, time.UnixMilli(r.Timestamp).UTC())
		}
		n++
	}
	if t.staticF != nil {
		out.PutAt(n, t.static())
	}
	return r, t.key.encode(r, us, out)
}

// static returns static.value, nil when unset (Kafka inserts a null then).
func (t *insertField) static() any {
	return t.staticValue
}

func (t *insertField) updatedSchema(s *connect.Schema) (*connect.Schema, error) {
	if s.Type != connect.TypeStruct {
		return nil, sdk.DataError("Only Struct objects supported for [%s], found: %s", insertPurpose, s.Type.JavaName())
	}
	u := structBasics(s)
	u.Fields = append(u.Fields, s.Fields...)
	add := func(spec *insertSpec, schema *connect.Schema) {
		if spec != nil {
			u.Fields = append(u.Fields, connect.Field{Name: spec.name, Schema: schema})
		}
	}
	opt := func(spec *insertSpec) bool { return spec != nil && spec.optional }
	add(t.topic, connect.PrimitiveSchema(connect.TypeString, opt(t.topic)))
	add(t.partition, connect.PrimitiveSchema(connect.TypeInt32, opt(t.partition)))
	add(t.offset, connect.PrimitiveSchema(connect.TypeInt64, opt(t.offset)))
	add(t.ts, connect.TimestampSchema(opt(t.ts)))
	add(t.staticF, connect.PrimitiveSchema(connect.TypeString, opt(t.staticF)))
	return u, nil
}

// ---- ReplaceField ---------------------------------------------------------------------------

func validRenames(v string) error {
	for _, m := range (sdk.Config{"r": v}).List("r", nil) {
		if parts := strings.Split(m, ":"); len(parts) != 2 {
			return sdkErr("Invalid rename mapping: " + m)
		}
	}
	return nil
}

type sdkErr string

func (e sdkErr) Error() string { return string(e) }

type replaceField struct {
	nulls            nullPolicy
	key              operand
	exclude, include map[string]bool
	renames          map[string]string
	cache            schemaCache
}

const replacePurpose = "field replacement"

func (t *replaceField) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.exclude, t.include, t.renames = map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, f := range cfg.List("exclude", nil) {
		t.exclude[f] = true
	}
	for _, f := range cfg.List("include", nil) {
		t.include[f] = true
	}
	for _, m := range cfg.List("renames", nil) {
		old, nw, _ := strings.Cut(m, ":")
		t.renames[old] = nw
	}
	return nil
}

func (t *replaceField) filter(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *replaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *replaceField) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		return r, nil
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if s == nil {
		m, err := requireMap(v, replacePurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			if t.filter(k) {
				out[t.renamed(k)] = e
			}
		}
		return r, t.key.encode(r, nil, out)
	}
	st, err := requireStruct(v, replacePurpose)
	if err != nil {
		return nil, err
	}
	us, err := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		u := structBasics(s)
		for _, f := range s.Fields {
			if t.filter(f.Name) {
				u.Fields = append(u.Fields, connect.Field{Name: t.renamed(f.Name), Schema: f.Schema})
			}
		}
		return u, nil
	})
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(us)
	j := 0
	for i, f := range s.Fields {
		if t.filter(f.Name) {
			out.PutAt(j, st.GetAt(i))
			j++
		}
	}
	return r, t.key.encode(r, us, out)
}

// ---- MaskField ------------------------------------------------------------------------------

type maskField struct {
	slow        bool // tests: never take the textual fast path
	nulls       nullPolicy
	key         operand
	fields      map[string]bool
	order       []string
	replacement *string
}

const maskPurpose = "mask fields"

func (t *maskField) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.order = cfg.List("fields", nil)
	t.fields = map[string]bool{}
	for _, f := range t.order {
		t.fields[f] = true
	}
	if v, ok := cfg["replacement"]; ok {
		t.replacement = &v
	}
	return nil
}

func (t *maskField) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		return r, nil
	}
	if !t.slow && !t.nulls.keep {
		if ok, err := t.maskFast(r); ok || err != nil {
			return r, err
		}
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if s == nil {
		m, err := requireMap(v, maskPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for _, f := range t.order {
			mv, err := t.masked(m[f])
			if err != nil {
				return nil, err
			}
			out[f] = mv
		}
		return r, t.key.encode(r, nil, out)
	}
	st, err := requireStruct(v, maskPurpose)
	if err != nil {
		return nil, err
	}
	return t.maskStruct(r, s, st)
}

// maskFast masks the fields of a struct payload as text when it can: no replacement, a payload
// that has each field of its struct schema exactly once, and masked fields of types whose zero value
// is plain JSON. It saves decoding and encoding every field of every record; the result is what
// maskStruct writes, up to the spacing and number formatting of the fields it leaves alone. It
// returns false to take the slow path.
func (t *maskField) maskFast(r *sdk.Record) (bool, error) {
	d := t.key.get(r)
	if t.replacement != nil || d.Tag != sdk.TagJSON || len(d.Schema) == 0 {
		return false, nil
	}
	s, err := connect.ParseSchema(d.Schema)
	if err != nil || s == nil || s.Type != connect.TypeStruct || len(s.Fields) > 64 {
		return false, nil
	}
	p := d.Bytes
	out := make([]byte, 0, len(p)+8)
	copied, seen, fields := 0, uint64(0), 0
	errSlow := errors.New("slow path")
	err = connect.ScanObject(p, func(k []byte, start, end int) error {
		i := s.FieldIndex(string(k))
		if i < 0 || seen&(1<<i) != 0 {
			return errSlow
		}
		seen |= 1 << i
		fields++
		f := s.Fields[i]
		isNull := string(p[start:end]) == "null"
		switch {
		case isNull && f.Schema.Default != nil && !t.fields[f.Name]:
			return errSlow // the slow path writes the default
		case !t.fields[f.Name]:
			return nil
		case isNull && f.Schema.Default == nil:
			return nil // masked(null) is null
		}
		zero := zeroJSON(f.Schema)
		if zero == "" {
			return errSlow
		}
		out = append(out, p[copied:start]...)
		out = append(out, zero...)
		copied = end
		return nil
	})
	if err != nil || fields != len(s.Fields) {
		return false, nil // the slow path decides, and reports errors as Kafka would
	}
	if copied == 0 {
		return true, nil // nothing to mask: the record is unchanged
	}
	out = append(out, p[copied:]...)
	t.key.set(r, sdk.JSON(d.Schema, out))
	return true, nil
}

// zeroJSON is the JSON of what MaskField puts in place of a value of schema s, or "" when the slow
// path must decide.
func zeroJSON(s *connect.Schema) string {
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		return "0" // Date, Time and Timestamp: new Date(0)
	case connect.TypeFloat32, connect.TypeFloat64:
		return "0.0"
	case connect.TypeBoolean:
		return "false"
	case connect.TypeString:
		return `""`
	case connect.TypeArray:
		return "[]"
	case connect.TypeMap:
		if s.Keys.Type == connect.TypeString {
			return "{}"
		}
		return "[]"
	}
	return ""
}

func (t *maskField) maskStruct(r *sdk.Record, s *connect.Schema, st *connect.Struct) (*sdk.Record, error) {
	var err error
	out := connect.NewStruct(s)
	for i, f := range s.Fields {
		fv := st.GetAt(i)
		if t.fields[f.Name] {
			if fv, err = t.masked(fv); err != nil {
				return nil, err
			}
		}
		out.PutAt(i, fv)
	}
	return r, t.key.encode(r, s, out)
}

func (t *maskField) masked(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement == nil {
		switch x := v.(type) {
		case bool:
			return false, nil
		case int8:
			return int8(0), nil
		case int16:
			return int16(0), nil
		case int32:
			return int32(0), nil
		case int64:
			return int64(0), nil
		case float32:
			return float32(0), nil
		case float64:
			return float64(0), nil
		case string:
			return "", nil
		case *big.Rat:
			return new(big.Rat), nil
		case time.Time:
			return time.UnixMilli(0).UTC(), nil
		case []any:
			return []any{}, nil
		case map[string]any:
			return map[string]any{}, nil
		case []connect.MapEntry:
			return []connect.MapEntry{}, nil
		default:
			_ = x
			return nil, sdk.DataError("Cannot mask value of type: %s", javaClass(v))
		}
	}
	rep := *t.replacement
	numErr := func() error {
		return sdk.DataError("Unable to convert %s (class java.lang.String) to number", rep)
	}
	switch v.(type) {
	case string:
		return rep, nil
	case int8, int16, int32, int64:
		n, err := strconv.ParseInt(strings.TrimSpace(rep), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(strings.TrimSpace(rep), 64)
			if ferr != nil {
				return nil, numErr()
			}
			n = int64(f)
		}
		switch v.(type) {
		case int8:
			return int8(n), nil
		case int16:
			return int16(n), nil
		case int32:
			return int32(n), nil
		}
		return n, nil
	case float32, float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(rep), 64)
		if err != nil {
			return nil, numErr()
		}
		if _, ok := v.(float32); ok {
			return float32(f), nil
		}
		return f, nil
	case *big.Rat:
		q, ok := new(big.Rat).SetString(rep)
		if !ok {
			return nil, numErr()
		}
		return q, nil
	}
	return nil, sdk.DataError("Cannot mask value of type %s with custom replacement.", javaClass(v))
}

// ---- ValueToKey -----------------------------------------------------------------------------

type valueToKey struct {
	nulls  nullPolicy
	fields []string
	cache  schemaCache
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *valueToKey) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.fields = cfg.List("fields", nil)
	return nil
}

func (t *valueToKey) Apply(r *sdk.Record) (*sdk.Record, error) {
	s, v, err := t.nulls.decode(r.Value)
	if err != nil {
		return nil, err
	}
	if s == nil {
		m, err := requireMap(v, valueToKeyPurpose)
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		return r, operand(true).encode(r, nil, key)
	}
	st, err := requireStruct(v, valueToKeyPurpose)
	if err != nil {
		return nil, err
	}
	ks, err := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		k := &connect.Schema{Type: connect.TypeStruct}
		for _, f := range t.fields {
			vf := s.Field(f)
			if vf == nil {
				return nil, sdk.DataError("Field does not exist: %s", f)
			}
			k.Fields = append(k.Fields, connect.Field{Name: f, Schema: vf.Schema})
		}
		return k, nil
	})
	if err != nil {
		return nil, err
	}
	key := connect.NewStruct(ks)
	for i, f := range t.fields {
		fv, _ := st.Get(f)
		key.PutAt(i, fv)
	}
	return r, operand(true).encode(r, ks, key)
}

// ---- ExtractField ---------------------------------------------------------------------------

type extractField struct {
	nulls nullPolicy
	key   operand
	path  []string
}

const extractPurpose = "field extraction"

func (t *extractField) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	f := cfg["field"]
	if strings.EqualFold(cfg.String("field.syntax.version", "V1"), "V2") {
		t.path = strings.Split(f, ".")
	} else {
		t.path = []string{f}
	}
	return nil
}

func (t *extractField) Apply(r *sdk.Record) (*sdk.Record, error) {
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if s == nil {
		for _, p := range t.path {
			m, err := requireMapOrNull(v, extractPurpose)
			if err != nil {
				return nil, err
			}
			if m == nil {
				v = nil
				break
			}
			v = m[p]
		}
		return r, t.key.encode(r, nil, v)
	}
	for _, p := range t.path {
		st, err := requireStructOrNull(v, extractPurpose)
		if err != nil {
			return nil, err
		}
		if s.Type != connect.TypeStruct {
			return nil, sdk.DataError("Only Struct objects supported for [%s], found: %s", extractPurpose, s.Type.JavaName())
		}
		i := s.FieldIndex(p)
		if i < 0 {
			return nil, &sdk.RecordError{Class: "java.lang.IllegalArgumentException", Err: sdkErr("Unknown field: " + strings.Join(t.path, "."))}
		}
		s = s.Fields[i].Schema
		if st == nil {
			v = nil
		} else {
			v = st.GetAt(i)
		}
	}
	return r, t.key.encode(r, s, v)
}

// ---- HoistField -----------------------------------------------------------------------------

type hoistField struct {
	key   operand
	field string
	cache schemaCache
}

func (t *hoistField) Configure(cfg sdk.Config) error {
	t.field = cfg["field"]
	return nil
}

func (t *hoistField) Apply(r *sdk.Record) (*sdk.Record, error) {
	s, v, err := t.key.decode(r)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return r, t.key.encode(r, nil, map[string]any{t.field: v})
	}
	us, _ := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		return &connect.Schema{Type: connect.TypeStruct, Fields: []connect.Field{{Name: t.field, Schema: s}}}, nil
	})
	out := connect.NewStruct(us)
	out.PutAt(0, v)
	return r, t.key.encode(r, us, out)
}
