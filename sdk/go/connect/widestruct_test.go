package connect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// TestWideStructKeepsEveryField: a struct of more than 8 fields (where FieldIndex switches to a
// name index) is decoded with every field's value, not only the first nine.
func TestWideStructKeepsEveryField(t *testing.T) {
	var fields, values []string
	for i := range 12 {
		fields = append(fields, fmt.Sprintf(`{"field":"f%d","type":"int32"}`, i))
		values = append(values, fmt.Sprintf(`"f%d":%d`, i, i))
	}
	schema := `{"type":"struct","fields":[` + strings.Join(fields, ",") + `]}`
	s, v, err := Decode(wire.JSON([]byte(schema), []byte("{"+strings.Join(values, ",")+"}")))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*Struct)
	for i := range 12 {
		name := fmt.Sprintf("f%d", i)
		if j := s.FieldIndex(name); j != i {
			t.Errorf("FieldIndex(%s) = %d, want %d", name, j, i)
		}
		if got := st.GetAt(i); got != int32(i) {
			t.Errorf("field %s = %v, want %d", name, got, i)
		}
	}
	if _, err := ParseSchema([]byte(`{"type":"struct","fields":[{"field":"a","type":"int8"},{"field":"a","type":"int8"}]}`)); err == nil {
		t.Error("a duplicate field name is accepted")
	}
}
