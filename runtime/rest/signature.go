package rest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Internal request signatures
//
// Workers sign the requests they send each other (forwarded requests, and internal ones) with a key
// they share: in Kafka the session key the leader writes to the config topic (KIP-507). The headers
// are Kafka's:
//
//	X-Connect-Authorization: base64(HMAC-SHA256(key, message))
//	X-Connect-Request-Signature-Algorithm: HmacSHA256
//	X-Connect-Request-Timestamp: <milliseconds since the epoch>   (wasmconnect's addition)
//
// Kafka signs the body alone. That signature is the same for every request with the same body, so one
// signed request with an empty body (a forwarded DELETE, stop or restart) would let whoever saw it
// send any other bodiless request. wasmconnect therefore signs
//
//	message = METHOD "\n" REQUEST-URI "\n" TIMESTAMP "\n" BODY
//
// where REQUEST-URI is the path and query as sent, and refuses timestamps more than SignatureMaxSkew
// away from its clock. Java workers' signatures (body only, no timestamp) are not accepted.

// The headers of a signed request.
const (
	SignatureHeader          = "X-Connect-Authorization"
	SignatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
	SignatureTimestampHeader = "X-Connect-Request-Timestamp"
)

// SignatureAlgorithm is the only algorithm signed and verified.
const SignatureAlgorithm = "HmacSHA256"

// SignatureMaxSkew is how far a signed request's timestamp may be from the receiver's clock.
const SignatureMaxSkew = 5 * time.Minute

// WithInternalKey makes the server verify the signatures of requests from other workers. key
// returns the current shared key (the session key); nil or empty while the worker has none yet.
// A request is taken as coming from a worker when it has a "forward" query parameter or a signature
// header: it must then carry a valid signature (400 when missing, 403 when invalid or expired, 503
// while key returns nil), and one that does is served with the admin role without user credentials,
// since the worker that forwarded it authorized its user. Requests without those marks are
// authenticated as usual.
func WithInternalKey(key func() []byte) Option {
	return func(s *Server) { s.internalKey = key }
}

// SignRequest signs req, whose body is body, with key (see WithInternalKey). The request's URL
// must be final: the path and query are signed.
func SignRequest(req *http.Request, key, body []byte) {
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	req.Header.Set(SignatureHeader, base64.StdEncoding.EncodeToString(signature(key, req.Method, req.URL.RequestURI(), ts, body)))
	req.Header.Set(SignatureAlgorithmHeader, SignatureAlgorithm)
	req.Header.Set(SignatureTimestampHeader, ts)
}

func signature(key []byte, method, uri, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	io.WriteString(mac, method)
	mac.Write([]byte{'\n'})
	io.WriteString(mac, uri)
	mac.Write([]byte{'\n'})
	io.WriteString(mac, ts)
	mac.Write([]byte{'\n'})
	mac.Write(body)
	return mac.Sum(nil)
}

// isInternal reports whether r claims to come from another worker.
func isInternal(r *http.Request) bool {
	return r.URL.Query().Has("forward") || r.Header.Get(SignatureHeader) != "" || r.Header.Get(SignatureAlgorithmHeader) != ""
}

// requestURI is the path and query of r as the client sent them (before ServeHTTP strips a trailing
// slash).
func requestURI(r *http.Request) string {
	uri := r.RequestURI
	if uri == "" {
		return r.URL.RequestURI()
	}
	if !strings.HasPrefix(uri, "/") { // absolute form, sent to a proxy
		if u, err := url.Parse(uri); err == nil {
			return u.RequestURI()
		}
	}
	return uri
}

// verifySignature checks the signature of a request that claims to come from another worker.
func (s *Server) verifySignature(r *http.Request, body []byte) error {
	key := s.internalKey()
	if len(key) == 0 {
		return &connect.Error{Code: http.StatusServiceUnavailable,
			Message: "This worker cannot verify internal requests yet: it has not read a session key from the config topic"}
	}
	sig, alg := r.Header.Get(SignatureHeader), r.Header.Get(SignatureAlgorithmHeader)
	if sig == "" || alg == "" {
		return connect.BadRequest("Internal request missing required signature")
	}
	if !strings.EqualFold(alg, SignatureAlgorithm) {
		return connect.BadRequest("This worker does not support the '%s' signature algorithm; it verifies %s", alg, SignatureAlgorithm)
	}
	ts := r.Header.Get(SignatureTimestampHeader)
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return connect.BadRequest("Internal request missing a valid %s header (milliseconds since the epoch)", SignatureTimestampHeader)
	}
	if skew := time.Since(time.UnixMilli(ms)); skew > SignatureMaxSkew || skew < -SignatureMaxSkew {
		return &connect.Error{Code: http.StatusForbidden,
			Message: "Internal request signature has expired: its timestamp is " + skew.Round(time.Millisecond).String() +
				" away from this worker's clock (the limit is " + SignatureMaxSkew.String() + ")"}
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, signature(key, r.Method, requestURI(r), ts, body)) {
		return &connect.Error{Code: http.StatusForbidden, Message: "Internal request contained invalid signature."}
	}
	return nil
}

// withBodyBytes returns r with its body replaced by b, already read.
func withBodyBytes(r *http.Request, b []byte) *http.Request {
	r2 := *r
	r2.Body = io.NopCloser(bytes.NewReader(b))
	r2.ContentLength = int64(len(b))
	return &r2
}
