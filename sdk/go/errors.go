package sdk

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Retriable marks err as retriable: the host may repeat the call later (errors.retry.timeout), for
// example after a timeout talking to an external system. Retriable(nil) is nil.
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return &retriableError{err}
}

// IsRetriable reports whether err, or an error it wraps, was marked with Retriable.
func IsRetriable(err error) bool {
	var r *retriableError
	return errors.As(err, &r)
}

type retriableError struct{ err error }

func (e *retriableError) Error() string { return e.err.Error() }
func (e *retriableError) Unwrap() error { return e.err }

// PanicError is the error a call returns when the plugin panicked. The SDK recovers panics of plugin
// methods, so a bug in a plugin fails the call and not the whole module.
type PanicError struct {
	Plugin string // plugin name
	Op     string // ABI operation, e.g. POLL
	Value  any    // the value passed to panic
	Stack  []byte // stack trace of the panicking goroutine
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s: panic during %s: %v\n\n%s", e.Plugin, e.Op, e.Value, e.Stack)
}

func newPanicError(plugin, op string, v any) *PanicError {
	return &PanicError{Plugin: plugin, Op: op, Value: v, Stack: debug.Stack()}
}
