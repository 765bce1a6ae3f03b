//go:build unix

package rootfs

import (
	"os"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// openNonblock is added to every open, so that opening a FIFO or a device never blocks.
const openNonblock = syscall.O_NONBLOCK

var platformFlags = []flagMap{{experimentalsys.O_DIRECTORY, syscall.O_DIRECTORY}}

// clearNonblock undoes openNonblock on a regular file or directory the guest opened blocking.
func clearNonblock(f *os.File) error { return syscall.SetNonblock(int(f.Fd()), false) }
