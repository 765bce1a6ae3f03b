package main

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

func registerSchemaTransforms() {
	kv("Cast", func(key bool) sdk.Transformation { return &cast{key: operand(key)} },
		sdk.ConfigDef{Name: "spec", Type: sdk.TypeList, Required: true, Importance: sdk.High, Validator: validCastSpec,
			Documentation: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."},
		replaceNullDef)
	kv("TimestampConverter", func(key bool) sdk.Transformation { return &timestampConverter{key: operand(key)} },
		sdk.ConfigDef{Name: "target.type", Required: true, Importance: sdk.High, Validator: sdk.OneOf("string", "unix", "Date", "Time", "Timestamp"),
			Documentation: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"},
		sdk.ConfigDef{Name: "field", Default: new(""), Importance: sdk.High, Documentation: "The field containing the timestamp, or empty if the entire value is a timestamp"},
		sdk.ConfigDef{Name: "format", Default: new(""), Importance: sdk.Medium,
			Documentation: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."},
		sdk.ConfigDef{Name: "unix.precision", Default: new("milliseconds"), Importance: sdk.Low, Validator: sdk.OneOf("nanoseconds", "microseconds", "milliseconds", "seconds"),
			Documentation: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."},
		replaceNullDef)
	kv("Flatten", func(key bool) sdk.Transformation { return &flatten{key: operand(key)} },
		sdk.ConfigDef{Name: "delimiter", Default: new("."), Importance: sdk.Medium,
			Documentation: "Delimiter to insert between field names from the input record when generating field names for the output record"})
	kv("SetSchemaMetadata", func(key bool) sdk.Transformation { return &setSchemaMetadata{key: operand(key)} },
		sdk.ConfigDef{Name: "schema.name", Importance: sdk.High, Documentation: "Schema name to set."},
		sdk.ConfigDef{Name: "schema.version", Type: sdk.TypeInt, Importance: sdk.High, Documentation: "Schema version to set."},
		replaceNullDef)
}

// ---- Cast -----------------------------------------------------------------------------------

var castTypes = map[string]connect.Type{
	"int8": connect.TypeInt8, "int16": connect.TypeInt16, "int32": connect.TypeInt32, "int64": connect.TypeInt64,
	"float32": connect.TypeFloat32, "float64": connect.TypeFloat64, "boolean": connect.TypeBoolean, "string": connect.TypeString,
}

type castSpec struct {
	whole  connect.Type // "" unless the whole value is cast
	fields map[string]connect.Type
	order  []string
}

func parseCastSpec(v string) (*castSpec, error) {
	spec := &castSpec{fields: map[string]connect.Type{}}
	items := (sdk.Config{"spec": v}).List("spec", nil)
	if len(items) == 0 {
		return nil, sdkErr("Must specify at least one field to cast.")
	}
	for _, it := range items {
		name, typ, ok := strings.Cut(it, ":")
		if !ok {
			if len(items) > 1 {
				return nil, sdkErr("Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec")
			}
			typ = name
		}
		t, known := castTypes[strings.ToLower(strings.TrimSpace(typ))]
		if !known {
			return nil, sdkErr("Invalid type found in casting spec: " + strings.TrimSpace(typ))
		}
		if !ok {
			spec.whole = t
			continue
		}
		name = strings.TrimSpace(name)
		spec.fields[name] = t
		spec.order = append(spec.order, name)
	}
	return spec, nil
}

func validCastSpec(v string) error {
	_, err := parseCastSpec(v)
	return err
}

type cast struct {
	nulls nullPolicy
	key   operand
	spec  *castSpec
	cache schemaCache
}

const castPurpose = "cast types"

func (t *cast) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	var err error
	t.spec, err = parseCastSpec(cfg["spec"])
	if err != nil {
		return sdk.InvalidConfig("spec", cfg["spec"], err.Error())
	}
	return nil
}

func (t *cast) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		return r, nil
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if s == nil {
		if t.spec.whole != "" {
			cv, err := castValue(nil, v, t.spec.whole)
			if err != nil {
				return nil, err
			}
			return r, t.key.encode(r, nil, cv)
		}
		m, err := requireMap(v, castPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for _, f := range t.spec.order {
			cv, err := castValue(nil, m[f], t.spec.fields[f])
			if err != nil {
				return nil, err
			}
			out[f] = cv
		}
		return r, t.key.encode(r, nil, out)
	}
	us, err := t.cache.get(s, t.updatedSchema)
	if err != nil {
		return nil, err
	}
	if t.spec.whole != "" {
		cv, err := castValue(s, v, t.spec.whole)
		if err != nil {
			return nil, err
		}
		return r, t.key.encode(r, us, cv)
	}
	st, err := requireStruct(v, castPurpose)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(us)
	for i, f := range s.Fields {
		fv := st.GetAt(i)
		if typ, ok := t.spec.fields[f.Name]; ok {
			if fv, err = castValue(f.Schema, fv, typ); err != nil {
				return nil, err
			}
		}
		out.PutAt(i, fv)
	}
	return r, t.key.encode(r, us, out)
}

func (t *cast) updatedSchema(s *connect.Schema) (*connect.Schema, error) {
	if t.spec.whole != "" {
		if err := validCastType(s.Type, "input"); err != nil {
			return nil, err
		}
		u := structBasics(s)
		u.Type = t.spec.whole
		u.Optional = s.Optional
		if s.Default != nil {
			d, err := castValue(s, s.Default, t.spec.whole)
			if err != nil {
				return nil, err
			}
			u.Default = d
		}
		return u, nil
	}
	if s.Type != connect.TypeStruct {
		return nil, sdk.DataError("Only Struct objects supported for [%s], found: %s", castPurpose, s.Type.JavaName())
	}
	u := structBasics(s)
	for _, f := range s.Fields {
		typ, ok := t.spec.fields[f.Name]
		if !ok {
			u.Fields = append(u.Fields, f)
			continue
		}
		if err := validCastType(f.Schema.Type, "input"); err != nil {
			return nil, err
		}
		fs := &connect.Schema{Type: typ, Optional: f.Schema.Optional}
		if f.Schema.Default != nil {
			d, err := castValue(f.Schema, f.Schema.Default, typ)
			if err != nil {
				return nil, err
			}
			fs.Default = d
		}
		u.Fields = append(u.Fields, connect.Field{Name: f.Name, Schema: fs})
	}
	u.Optional = s.Optional
	return u, nil
}

func validCastType(t connect.Type, what string) error {
	switch t {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64, connect.TypeFloat32, connect.TypeFloat64,
		connect.TypeBoolean, connect.TypeString, connect.TypeBytes:
		return nil
	}
	return sdk.DataError("Cast transformation does not support casting to/from %s", t.JavaName())
}

// castValue follows Kafka's Cast.castValueToType.
func castValue(s *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s != nil {
		if err := validCastType(s.Type, "input"); err != nil {
			return nil, err
		}
	}
	if target != connect.TypeString {
		// Logical types cast as their internal representation.
		switch x := v.(type) {
		case time.Time:
			switch s.Name {
			case connect.DateName:
				v = int32(x.UnixMilli() / 86400000)
			case connect.TimeName:
				v = int32(x.UnixMilli() % 86400000)
			default:
				v = x.UnixMilli()
			}
		case *big.Rat:
			f, _ := x.Float64()
			v = f
		}
	}
	unexpected := func() (any, error) {
		return nil, sdk.DataError("Unexpected type in Cast transformation: %s", javaClass(v))
	}
	outOfRange := func() (any, error) {
		return nil, sdk.DataError("Value (%v) was out of range for requested data type", v)
	}
	switch target {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		var n int64
		switch x := v.(type) {
		case int8, int16, int32, int64:
			n = toInt64(x)
		case float32, float64:
			f := toFloat64(x)
			if target == connect.TypeInt64 {
				n = javaFloatToLong(f)
			} else { // Java narrows a floating point number to int first
				n = max(min(javaFloatToLong(f), math.MaxInt32), math.MinInt32)
			}
		case bool:
			if x {
				n = 1
			}
		case string:
			bits := map[connect.Type]int{connect.TypeInt8: 8, connect.TypeInt16: 16, connect.TypeInt32: 32, connect.TypeInt64: 64}[target]
			p, err := strconv.ParseInt(x, 10, bits)
			if err != nil {
				return outOfRange()
			}
			n = p
		default:
			return unexpected()
		}
		switch target {
		case connect.TypeInt8:
			return int8(n), nil
		case connect.TypeInt16:
			return int16(n), nil
		case connect.TypeInt32:
			return int32(n), nil
		}
		return n, nil
	case connect.TypeFloat32, connect.TypeFloat64:
		var f float64
		switch x := v.(type) {
		case int8, int16, int32, int64:
			f = float64(toInt64(x))
		case float32:
			f = float64(x)
		case float64:
			f = x
		case bool:
			if x {
				f = 1
			}
		case string:
			p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return outOfRange()
			}
			f = p
		default:
			return unexpected()
		}
		if target == connect.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case connect.TypeBoolean:
		switch x := v.(type) {
		case int8, int16, int32, int64:
			return toInt64(x) != 0, nil
		case float32:
			return x != 0, nil
		case float64:
			return x != 0, nil
		case bool:
			return x, nil
		case string:
			return strings.EqualFold(x, "true"), nil
		}
		return unexpected()
	case connect.TypeString:
		switch x := v.(type) {
		case time.Time:
			// Kafka's Values.dateFormatFor: a time of day, a date, or both.
			ms := x.UnixMilli()
			switch {
			case ms >= 0 && ms < 86400000:
				return x.UTC().Format("15:04:05.000Z"), nil
			case ms%86400000 == 0:
				return x.UTC().Format("2006-01-02"), nil
			}
			return x.UTC().Format("2006-01-02T15:04:05.000Z"), nil
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		case string:
			return x, nil
		case bool:
			return strconv.FormatBool(x), nil
		case int8, int16, int32, int64:
			return strconv.FormatInt(toInt64(x), 10), nil
		case float32:
			return javaDouble(float64(x), 32), nil
		case float64:
			return javaDouble(x, 64), nil
		case *big.Rat:
			return x.FloatString(decimalPlaces(s)), nil
		}
		return fmt.Sprint(v), nil
	}
	return nil, sdk.DataError("Cast transformation does not support casting to/from %s", target.JavaName())
}

func decimalPlaces(s *connect.Schema) int {
	if s == nil {
		return 0
	}
	n, _ := strconv.Atoi(s.Parameters["scale"])
	return n
}

func toFloat64(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// javaFloatToLong converts as Java's (long) cast does: NaN is 0, out-of-range values saturate.
func javaFloatToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaDouble formats f as Java's Double.toString (Float.toString for bits 32).
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if f == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.5E+10
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// ---- TimestampConverter ---------------------------------------------------------------------

type timestampConverter struct {
	nulls     nullPolicy
	key       operand
	field     string
	target    string
	layout    *javaLayout
	precision string
	cache     schemaCache
}

const timestampPurpose = "converting timestamp formats"

func (t *timestampConverter) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	t.field = cfg["field"]
	t.target = cfg["target.type"]
	t.precision = cfg.String("unix.precision", "milliseconds")
	f := cfg["format"]
	if t.target == "string" && strings.TrimSpace(f) == "" {
		return sdk.InvalidConfig("format", f, "TimestampConverter requires format option to be specified when using string timestamps")
	}
	if f != "" {
		l, err := parseJavaLayout(f)
		if err != nil {
			return sdk.InvalidConfig("format", f, "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "+err.Error())
		}
		t.layout = l
	}
	return nil
}

func (t *timestampConverter) Apply(r *sdk.Record) (*sdk.Record, error) {
	if t.key.isNull(r) {
		if d := t.key.get(r); t.field == "" && len(d.Schema) > 0 {
			// Kafka keeps the null and gives it the target schema.
			s, err := connect.ParseSchema(d.Schema)
			if err != nil {
				return nil, sdk.DataError("%v", err)
			}
			return r, t.key.encode(r, t.targetSchema(s.Optional), nil)
		}
		return r, nil
	}
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if t.field == "" {
		if s == nil {
			ts, err := t.toTime(nil, v)
			if err != nil {
				return nil, err
			}
			out, err := t.fromTime(ts)
			if err != nil {
				return nil, err
			}
			return r, t.key.encode(r, nil, out)
		}
		ts, err := t.toTime(s, v)
		if err != nil {
			return nil, err
		}
		out, err := t.fromTime(ts)
		if err != nil {
			return nil, err
		}
		return r, t.key.encode(r, t.targetSchema(s.Optional), out)
	}
	if s == nil {
		m, err := requireMap(v, timestampPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		if fv := m[t.field]; fv != nil {
			ts, err := t.toTime(nil, fv)
			if err != nil {
				return nil, err
			}
			if out[t.field], err = t.fromTime(ts); err != nil {
				return nil, err
			}
		}
		return r, t.key.encode(r, nil, out)
	}
	st, err := requireStruct(v, timestampPurpose)
	if err != nil {
		return nil, err
	}
	us, err := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		u := structBasics(s)
		for _, f := range s.Fields {
			if f.Name == t.field {
				f = connect.Field{Name: f.Name, Schema: t.targetSchema(f.Schema.Optional)}
			}
			u.Fields = append(u.Fields, f)
		}
		return u, nil
	})
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(us)
	for i, f := range s.Fields {
		fv := st.GetAt(i)
		if f.Name == t.field && fv != nil {
			ts, err := t.toTime(f.Schema, fv)
			if err != nil {
				return nil, err
			}
			if fv, err = t.fromTime(ts); err != nil {
				return nil, err
			}
		}
		out.PutAt(i, fv)
	}
	return r, t.key.encode(r, us, out)
}

func (t *timestampConverter) targetSchema(optional bool) *connect.Schema {
	switch t.target {
	case "string":
		return connect.PrimitiveSchema(connect.TypeString, optional)
	case "unix":
		return connect.PrimitiveSchema(connect.TypeInt64, optional)
	case "Date":
		return connect.DateSchema(optional)
	case "Time":
		return connect.TimeSchema(optional)
	}
	return connect.TimestampSchema(optional)
}

// toTime reads a timestamp: a Date/Time/Timestamp value, a unix number or a formatted string.
func (t *timestampConverter) toTime(s *connect.Schema, v any) (time.Time, error) {
	if s != nil {
		switch {
		case s.Name == connect.TimestampName || s.Name == connect.DateName || s.Name == connect.TimeName:
		case s.Type == connect.TypeString, s.Type == connect.TypeInt64:
		default:
			return time.Time{}, sdk.DataError("Schema %s does not correspond to a known timestamp type format", s)
		}
	}
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case int64:
		switch t.precision {
		case "seconds":
			return time.Unix(x, 0).UTC(), nil
		case "microseconds":
			return time.UnixMicro(x).Truncate(time.Millisecond).UTC(), nil
		case "nanoseconds":
			return time.Unix(0, x).Truncate(time.Millisecond).UTC(), nil
		}
		return time.UnixMilli(x).UTC(), nil
	case string:
		if t.layout == nil {
			return time.Time{}, sdk.DataError("TimestampConverter requires format option to be specified when using string timestamps")
		}
		ts, err := t.layout.parse(x)
		if err != nil {
			return time.Time{}, sdk.DataError("Could not parse timestamp: value (%s) does not match pattern (%s)", x, t.layout.java)
		}
		return ts, nil
	}
	return time.Time{}, sdk.DataError("TimestampConverter does not support %s objects as timestamps", javaClass(v))
}

func (t *timestampConverter) fromTime(ts time.Time) (any, error) {
	ts = ts.UTC()
	switch t.target {
	case "string":
		return t.layout.format(ts), nil
	case "unix":
		switch t.precision {
		case "seconds":
			return ts.Unix(), nil
		case "microseconds":
			return ts.UnixMilli() * 1000, nil
		case "nanoseconds":
			return ts.UnixMilli() * 1000000, nil
		}
		return ts.UnixMilli(), nil
	case "Date":
		y, m, d := ts.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	case "Time":
		ms := ts.UnixMilli() % 86400000
		if ms < 0 {
			ms += 86400000
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	return ts, nil
}

// ---- Flatten --------------------------------------------------------------------------------

type flatten struct {
	key   operand
	delim string
	cache schemaCache
}

const flattenPurpose = "flattening"

func (t *flatten) Configure(cfg sdk.Config) error {
	t.delim = cfg.String("delimiter", ".")
	return nil
}

func (t *flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delim + field
}

func (t *flatten) Apply(r *sdk.Record) (*sdk.Record, error) {
	s, v, err := t.key.decode(r)
	if err != nil {
		return nil, err
	}
	if s == nil {
		m, err := requireMapOrNull(v, flattenPurpose)
		if err != nil || m == nil {
			return r, err
		}
		out := map[string]any{}
		if err := t.flattenMap(m, "", out); err != nil {
			return nil, err
		}
		return r, t.key.encode(r, nil, out)
	}
	st, err := requireStructOrNull(v, flattenPurpose)
	if err != nil {
		return nil, err
	}
	us, err := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		if s.Type != connect.TypeStruct {
			return nil, sdk.DataError("Only Struct objects supported for [%s], found: %s", flattenPurpose, s.Type.JavaName())
		}
		// Kafka: the parent's optionality makes every field optional; the struct itself is not.
		u := structBasics(s)
		if err := t.flattenSchema(s, "", s.Optional, u); err != nil {
			return nil, err
		}
		return u, nil
	})
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r, t.key.encode(r, us, nil)
	}
	out := connect.NewStruct(us)
	t.flattenStruct(st, "", out)
	return r, t.key.encode(r, us, out)
}

func (t *flatten) flattenMap(m map[string]any, prefix string, out map[string]any) error {
	for k, v := range m {
		name := t.name(prefix, k)
		switch x := v.(type) {
		case map[string]any:
			if err := t.flattenMap(x, name, out); err != nil {
				return err
			}
		case nil, bool, int8, int16, int32, int64, float32, float64, string, []byte, []any, time.Time, *big.Rat:
			out[name] = v
		default:
			return sdk.DataError("Flatten transformation does not support %s for record without schemas (for field %s).", javaClass(v), name)
		}
	}
	return nil
}

func (t *flatten) flattenSchema(s *connect.Schema, prefix string, optional bool, out *connect.Schema) error {
	for _, f := range s.Fields {
		name := t.name(prefix, f.Name)
		opt := optional || f.Schema.Optional
		if f.Schema.Type == connect.TypeStruct {
			if err := t.flattenSchema(f.Schema, name, opt, out); err != nil {
				return err
			}
			continue
		}
		fs := f.Schema
		if opt && !fs.Optional {
			fs = fs.Clone()
			fs.Optional = true
		}
		if out.FieldIndex(name) >= 0 {
			return sdk.DataError("Cannot create field because of field name duplication %s", name)
		}
		out.Fields = append(out.Fields, connect.Field{Name: name, Schema: fs})
	}
	return nil
}

func (t *flatten) flattenStruct(st *connect.Struct, prefix string, out *connect.Struct) {
	for i, f := range st.Schema().Fields {
		name := t.name(prefix, f.Name)
		v := st.GetAt(i)
		if f.Schema.Type == connect.TypeStruct {
			if sub, ok := v.(*connect.Struct); ok {
				t.flattenStruct(sub, name, out)
			}
			continue
		}
		_ = out.Put(name, v)
	}
}

// ---- SetSchemaMetadata ----------------------------------------------------------------------

type setSchemaMetadata struct {
	nulls   nullPolicy
	key     operand
	name    *string
	version *int
	cache   schemaCache
}

func (t *setSchemaMetadata) Configure(cfg sdk.Config) error {
	if err := t.nulls.configure(cfg); err != nil {
		return err
	}
	if v, ok := cfg["schema.name"]; ok {
		t.name = &v
	}
	if _, ok := cfg["schema.version"]; ok {
		n, err := cfg.Int("schema.version", 0)
		if err != nil {
			return err
		}
		t.version = &n
	}
	if t.name == nil && t.version == nil {
		return sdk.InvalidConfig("schema.name", "", "Neither schema name nor version configured")
	}
	return nil
}

func (t *setSchemaMetadata) Apply(r *sdk.Record) (*sdk.Record, error) {
	s, v, err := t.nulls.decode(t.key.get(r))
	if err != nil {
		return nil, err
	}
	if err := requireSchema(s, "updating schema metadata"); err != nil {
		return nil, err
	}
	us, _ := t.cache.get(s, func(s *connect.Schema) (*connect.Schema, error) {
		u := s.Clone()
		if t.name != nil {
			u.Name = *t.name
		}
		if t.version != nil {
			u.Version = t.version
		}
		return u, nil
	})
	if st, ok := v.(*connect.Struct); ok {
		// Kafka's updateSchemaIn: the struct takes the new schema.
		out := connect.NewStruct(us)
		for i := range us.Fields {
			out.PutAt(i, st.GetAt(i))
		}
		v = out
	}
	return r, t.key.encode(r, us, v)
}
