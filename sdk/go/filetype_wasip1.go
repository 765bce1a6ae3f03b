//go:build wasip1

package sdk

import (
	"io/fs"
	"syscall"
)

// untyped reports whether fi has a type WASI cannot name. WASI preview 1 has no file type for a
// FIFO (nor does wazero report a socket's), so they come as "unknown", which Go's os shows as a
// regular file.
func untyped(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Filetype == syscall.FILETYPE_UNKNOWN
}
