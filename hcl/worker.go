package hcl

import (
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// ReadWorkerConfig reads a worker config written in HCL and returns the same key/value settings
// a .properties file would give.
//
// Every top-level attribute is a setting: its name with underscores read as dots
// (bootstrap_servers = "localhost:9092" is bootstrap.servers), a list joined with commas. Keys
// that are awkward as HCL names go in a `properties` map verbatim:
//
//	group_id      = "connect-cluster"
//	plugin_path   = ["build/plugins"]
//	properties = {
//	  "value.converter.schemas.enable" = "false"
//	}
func ReadWorkerConfig(path string) (map[string]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading worker config: %w", err)
	}
	return ParseWorkerConfig(src, path)
}

// ParseWorkerConfig parses worker config HCL; filename is used in error positions.
func ParseWorkerConfig(src []byte, filename string) (map[string]string, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	props := map[string]string{}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := attrs[name]
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, diagError(diags)
		}
		if name == "properties" {
			if !v.Type().IsObjectType() && !v.Type().IsMapType() {
				return nil, posError(a.Expr.Range(), "properties must be a map of setting names to values")
			}
			for it := v.ElementIterator(); it.Next(); {
				k, ev := it.Element()
				s, err := settingValue(ev)
				if err != nil {
					return nil, posError(a.Expr.Range(), fmt.Sprintf("properties[%q]: %v", k.AsString(), err))
				}
				props[k.AsString()] = s
			}
			continue
		}
		s, err := settingValue(v)
		if err != nil {
			return nil, posError(a.Expr.Range(), fmt.Sprintf("%s: %v", name, err))
		}
		props[strings.ReplaceAll(name, "_", ".")] = s
	}
	return props, nil
}

// settingValue turns an HCL value into the string a .properties file would hold.
func settingValue(v cty.Value) (string, error) {
	if v.IsNull() {
		return "", fmt.Errorf("null is not a setting value")
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			i, _ := bf.Int(new(big.Int))
			return i.String(), nil
		}
		return bf.Text('g', -1), nil
	case t == cty.Bool:
		if v.True() {
			return "true", nil
		}
		return "false", nil
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, err := settingValue(ev)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("expected a string, number, bool or list, got %s", t.FriendlyName())
}

func posError(r hcl.Range, msg string) error {
	return fmt.Errorf("%s:%d,%d: %s", r.Filename, r.Start.Line, r.Start.Column, msg)
}

// diagError formats hcl diagnostics as "file:line,col: summary; detail" lines.
func diagError(diags hcl.Diagnostics) error {
	var lines []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("%s:%d,%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
		}
		lines = append(lines, msg)
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}
