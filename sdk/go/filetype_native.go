//go:build !wasip1

package sdk

import "io/fs"

// untyped reports whether fi has a type WASI cannot name; natively, the mode names every type.
func untyped(fs.FileInfo) bool { return false }
