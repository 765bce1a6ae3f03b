//go:build !unix

package rootfs

import "os"

// Elsewhere (Windows) an open of a special file does not block the way a FIFO's does on Unix, and
// the flags below have no equivalent: O_DIRECTORY is checked after the open.
const openNonblock = 0

var platformFlags []flagMap

func clearNonblock(*os.File) error { return nil }
