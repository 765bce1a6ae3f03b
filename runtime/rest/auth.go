package rest

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Role is what an authenticated user may do.
type Role string

const (
	// RoleRead may call every GET (and HEAD) endpoint and PUT .../config/validate, which changes nothing.
	RoleRead Role = "read"
	// RoleAdmin may also call every endpoint that changes something: POST, PUT, PATCH and DELETE.
	RoleAdmin Role = "admin"
)

// ParseRole reads "read" or "admin".
func ParseRole(s string) (Role, bool) {
	switch Role(strings.ToLower(strings.TrimSpace(s))) {
	case RoleRead:
		return RoleRead, true
	case RoleAdmin:
		return RoleAdmin, true
	}
	return "", false
}

// Principal is who sent a request.
type Principal struct {
	Name string
	Role Role
	// Internal is true for a request another worker signed (see WithInternalKey); such a request
	// has the admin role, since the worker that forwarded it has already authorized its user.
	Internal bool
}

// ErrNoCredentials is what an Authenticator returns for a request without credentials of a scheme
// it understands. Any other error means the credentials are wrong. Both are answered 401.
var ErrNoCredentials = errors.New("no credentials")

// ErrAuthUnavailable wraps the error of an Authenticator that cannot decide, e.g. because its
// credentials file cannot be read. Such requests are refused with 500 and the cause is logged, not
// shown to the client.
var ErrAuthUnavailable = errors.New("authentication unavailable")

// Authenticator tells who sent a request. NewBasicAuthFile and NewTokenFile read credentials files;
// Authenticators combines several.
type Authenticator interface {
	// Authenticate returns the principal behind r's credentials, ErrNoCredentials if r carries none
	// it understands, or another error if they are not valid.
	Authenticate(r *http.Request) (Principal, error)
	// Challenges are the WWW-Authenticate values of a 401, e.g. `Basic realm="wasmconnect", charset="UTF-8"`.
	Challenges() []string
}

// Realm is the realm of the WWW-Authenticate challenges.
const Realm = "wasmconnect"

// Authenticators combines authenticators: the first that recognises the request's credentials
// decides. A request with no credentials any of them understands gets ErrNoCredentials.
func Authenticators(as ...Authenticator) Authenticator {
	var flat multiAuth
	for _, a := range as {
		if a == nil {
			continue
		}
		if m, ok := a.(multiAuth); ok {
			flat = append(flat, m...)
		} else {
			flat = append(flat, a)
		}
	}
	if len(flat) == 1 {
		return flat[0]
	}
	return flat
}

type multiAuth []Authenticator

func (m multiAuth) Authenticate(r *http.Request) (Principal, error) {
	for _, a := range m {
		p, err := a.Authenticate(r)
		if errors.Is(err, ErrNoCredentials) {
			continue
		}
		return p, err
	}
	return Principal{}, ErrNoCredentials
}

func (m multiAuth) Challenges() []string {
	var out []string
	for _, a := range m {
		out = append(out, a.Challenges()...)
	}
	return out
}

// WithAuth makes the server authenticate requests with a (nil: no authentication, as in Kafka by
// default). Then every POST, PUT, PATCH and DELETE needs a user with the admin role: without
// credentials it is answered 401 with WWW-Authenticate, with wrong ones 401, and for a read-only user
// 403. GET and HEAD need the read (or admin) role, or no credentials at all with
// WithAnonymousRead. PUT /connector-plugins/{plugin}/config/validate changes nothing and needs the
// read role. GET /health is always open, for liveness probes; the checks behind its status (member
// ids, raw errors) are shown only to authenticated users with the read or admin role and to other
// workers, never to a client without credentials, even with WithAnonymousRead.
func WithAuth(a Authenticator) Option {
	return func(s *Server) { s.auth = a }
}

// WithAnonymousRead lets requests without credentials call the GET and HEAD endpoints when WithAuth
// is set; wrong credentials are still refused.
func WithAnonymousRead(allow bool) Option {
	return func(s *Server) { s.anonymousRead = allow }
}

// access is what a route needs.
type access int

const (
	accessPublic   access = iota // anyone: GET /health
	accessRead                   // read role; anonymous with WithAnonymousRead
	accessReadAuth               // read role, always authenticated: PUT .../config/validate
	accessAdmin                  // admin role: everything that changes state
)

// principalKey is the context key of the request's Principal.
type principalKey struct{}

// PrincipalFromContext returns who sent the request a herder call serves; ok is false when the
// server has no Authenticator (or the route is public) and the request was not signed by a worker.
func PrincipalFromContext(ctx context.Context) (p Principal, ok bool) {
	p, ok = ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// authError is a refused request: the error body plus the challenges of a 401.
type authError struct {
	err        *connect.Error
	challenges []string
}

func (e *authError) Error() string { return e.err.Message }

func unauthorized(msg string, challenges []string) error {
	return &authError{err: &connect.Error{Code: http.StatusUnauthorized, Message: msg}, challenges: challenges}
}

// secure wraps a route's handler with the signature check and authentication its access needs.
func (s *Server) secure(acc access, withBody bool, h httprouter.Handle) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		r, err := s.checkAccess(r, acc, withBody)
		if err != nil {
			var ae *authError
			if errors.As(err, &ae) {
				for _, c := range ae.challenges {
					w.Header().Add("WWW-Authenticate", c)
				}
				err = ae.err
			}
			s.writeError(w, r, err)
			return
		}
		if p, ok := PrincipalFromContext(r.Context()); ok {
			if lw, ok := w.(*logWriter); ok {
				lw.user = p.Name
			}
		}
		h(w, r, ps)
	}
}

// checkAccess decides whether r may call a route with the given access. It returns r with the
// Principal in its context.
func (s *Server) checkAccess(r *http.Request, acc access, withBody bool) (*http.Request, error) {
	if s.internalKey != nil && isInternal(r) {
		var body []byte
		if withBody {
			b, err := s.readBody(r)
			if err != nil {
				return r, err
			}
			body = b
			r = withBodyBytes(r, b)
		}
		if err := s.verifySignature(r, body); err != nil {
			return r, err
		}
		return withPrincipal(r, Principal{Name: "worker", Role: RoleAdmin, Internal: true}), nil
	}
	if s.auth == nil || acc == accessPublic {
		return r, nil
	}
	p, err := s.auth.Authenticate(r)
	switch {
	case errors.Is(err, ErrNoCredentials):
		if acc == accessRead && s.anonymousRead {
			return r, nil
		}
		return r, unauthorized("Authentication required: this worker accepts "+schemes(s.auth.Challenges()), s.auth.Challenges())
	case errors.Is(err, ErrAuthUnavailable):
		s.log.Error("REST authentication unavailable", "err", err)
		return r, &connect.Error{Code: http.StatusInternalServerError, Message: "Authentication is unavailable: the worker cannot read its credentials (see its log)"}
	case err != nil:
		return r, unauthorized("Invalid credentials", invalidChallenges(s.auth.Challenges(), r))
	}
	switch {
	case acc == accessAdmin && p.Role != RoleAdmin:
		return r, &connect.Error{Code: http.StatusForbidden, Message: "User " + p.Name + " may not change anything: this request needs the admin role"}
	case p.Role != RoleAdmin && p.Role != RoleRead:
		return r, &connect.Error{Code: http.StatusForbidden, Message: "User " + p.Name + " has no role that allows this request"}
	}
	return withPrincipal(r, p), nil
}

// readsHealthChecks reports whether r may see the checks of GET /health. Without an Authenticator
// every client may, as it may call every GET; with one, only an authenticated reader or another
// worker. It never refuses the request: GET /health answers everyone.
func (s *Server) readsHealthChecks(r *http.Request) bool {
	_, err := s.checkAccess(r, accessReadAuth, false)
	return err == nil
}

func withPrincipal(r *http.Request, p Principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// schemes names the schemes of the challenges, e.g. "HTTP basic credentials or a bearer token".
func schemes(challenges []string) string {
	var names []string
	for _, c := range challenges {
		scheme, _, _ := strings.Cut(c, " ")
		switch strings.ToLower(scheme) {
		case "basic":
			names = append(names, "HTTP basic credentials")
		case "bearer":
			names = append(names, "a bearer token")
		default:
			names = append(names, scheme+" credentials")
		}
	}
	if len(names) == 0 {
		return "credentials"
	}
	return strings.Join(names, " or ")
}

// invalidChallenges adds RFC 6750's error="invalid_token" to the Bearer challenge when the request
// sent a bearer token.
func invalidChallenges(challenges []string, r *http.Request) []string {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "bearer") {
		return challenges
	}
	out := make([]string, len(challenges))
	for i, c := range challenges {
		if s, _, _ := strings.Cut(c, " "); strings.EqualFold(s, "bearer") {
			c += `, error="invalid_token"`
		}
		out[i] = c
	}
	return out
}
