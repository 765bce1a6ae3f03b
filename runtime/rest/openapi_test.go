package rest

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
)

type openAPIDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components"`
}

func parseOpenAPI(t *testing.T, b []byte) openAPIDocument {
	t.Helper()
	var doc openAPIDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	return doc
}

var pathParam = regexp.MustCompile(`:([a-z]+)`)

// docPath turns an httprouter pattern into an OpenAPI path: :name is {connector} (Kafka's name).
func docPath(pattern string) string {
	return pathParam.ReplaceAllStringFunc(pattern, func(p string) string {
		if p == ":name" {
			return "{connector}"
		}
		return "{" + p[1:] + "}"
	})
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true, "trace": true}

// The document lists exactly the routes the server registers, each with responses, so it cannot
// drift from the code.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := parseOpenAPI(t, OpenAPI())
	s := New(newFake())

	registered := map[string]bool{}
	for _, rt := range s.table {
		key := strings.ToLower(rt.method) + " " + docPath(rt.path)
		registered[key] = true
		if _, ok := doc.Paths[docPath(rt.path)][strings.ToLower(rt.method)]; !ok {
			t.Errorf("route %s %s is not in openapi.json", rt.method, rt.path)
		}
	}
	opIDs := map[string]bool{}
	var documented []string
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if !httpMethods[method] {
				continue // e.g. path-level parameters
			}
			key := method + " " + path
			documented = append(documented, key)
			if !registered[key] {
				t.Errorf("openapi.json documents %s, which the server does not serve", key)
			}
			// The router really serves it (not only the table).
			concretePath := strings.NewReplacer("{connector}", "src", "{task}", "0", "{plugin}", "p", "{logger}", "root").Replace(path)
			if h, _, _ := s.router.Lookup(strings.ToUpper(method), concretePath); h == nil {
				t.Errorf("router does not serve %s %s", method, concretePath)
			}
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
				Parameters  []struct {
					Ref  string `json:"$ref"`
					Name string `json:"name"`
				} `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if op.OperationID == "" || opIDs[op.OperationID] {
				t.Errorf("%s: missing or duplicate operationId %q", key, op.OperationID)
			}
			opIDs[op.OperationID] = true
			if len(op.Responses) == 0 {
				t.Errorf("%s: no responses", key)
			}
			// Every path parameter is declared.
			for _, m := range regexp.MustCompile(`\{([a-z]+)\}`).FindAllStringSubmatch(path, -1) {
				found := false
				for _, p := range op.Parameters {
					if p.Name == m[1] || p.Ref == "#/components/parameters/"+m[1] {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: path parameter %s not declared", key, m[1])
				}
			}
		}
	}
	if len(documented) != len(registered) {
		sort.Strings(documented)
		t.Errorf("%d documented operations, %d registered routes", len(documented), len(registered))
	}
}

// Every $ref of the document points at something it defines.
func TestOpenAPIRefs(t *testing.T) {
	b := OpenAPI()
	doc := parseOpenAPI(t, b)
	for _, m := range regexp.MustCompile(`"\$ref":\s*"#/components/([a-zA-Z]+)/([a-zA-Z]+)"`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := doc.Components[m[1]][m[2]]; !ok {
			t.Errorf("unresolved $ref %s/%s", m[1], m[2])
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	hs := newHarness(t)
	r := hs.do("GET", "/openapi.json", "")
	if r.code != 200 || r.header.Get("Content-Type") != "application/json" || r.body != string(openAPIDoc) {
		t.Fatalf("GET /openapi.json: %d %q", r.code, r.header.Get("Content-Type"))
	}
	parseOpenAPI(t, []byte(r.body))
}
