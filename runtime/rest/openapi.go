package rest

import (
	_ "embed"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
)

// openAPIDoc is the OpenAPI 3 description of the whole API, served at GET /openapi.json. A test checks
// that it lists exactly the routes the server registers.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3 document of the API.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// GET /openapi.json
func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDoc)))
	_, _ = w.Write(openAPIDoc)
}
