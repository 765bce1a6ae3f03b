package connect

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an error with the HTTP status Kafka Connect's REST API answers it with. Its message is the
// "message" of the {"error_code","message"} body, so it is written for the user who sent the request.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// NotFound is a 404: a connector, task or plugin that does not exist.
func NotFound(format string, args ...any) error {
	return &Error{Code: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

// AlreadyExists is a 409 for a name that is taken.
func AlreadyExists(format string, args ...any) error {
	return &Error{Code: http.StatusConflict, Message: fmt.Sprintf(format, args...)}
}

// Conflict is a 409 for a request that cannot be served now (a rebalance, a stale config).
func Conflict(format string, args ...any) error {
	return &Error{Code: http.StatusConflict, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400: invalid input the user must change.
func BadRequest(format string, args ...any) error {
	return &Error{Code: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// StatusCode returns the HTTP status for err: the code of a wrapped *Error, else 500.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return http.StatusInternalServerError
}

// IsNotFound reports whether err is a 404.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// RequestTargetError says that another worker must serve a request, the one at URL: the leader, for
// the writes only it makes (Kafka's NotLeaderException), or the worker a task is assigned to, for a
// task restart (NotAssignedException). The herder returns it; the REST layer forwards the request
// there, as Kafka's HerderRequestHandler.completeOrForwardRequest does, so the herder knows nothing
// of HTTP.
type RequestTargetError struct {
	Reason string // why this worker cannot serve it, for logs
	URL    string // the target worker's advertised REST URL, e.g. "http://w2:8083/"
}

func (e *RequestTargetError) Error() string { return e.Reason + "; it is served at " + e.URL }
