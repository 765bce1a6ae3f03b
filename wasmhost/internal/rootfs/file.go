package rootfs

import (
	"errors"
	"io"
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// file is an open regular file or directory of an FS. A guest is single-threaded per instance, and
// wazero calls a file from that instance only, so file needs no lock.
type file struct {
	experimentalsys.UnimplementedFile
	f      *os.File
	flag   experimentalsys.Oflag
	st     sys.Stat_t // at open: the type, device and inode never change
	closed bool
}

func newFile(f *os.File, flag experimentalsys.Oflag, fi fs.FileInfo) *file {
	return &file{f: f, flag: flag, st: sys.NewStat_t(fi)}
}

func (f *file) isDir() bool { return f.st.Mode.IsDir() }

// errno is errnoOf for an operation on this file: EBADF once it is closed.
func (f *file) errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if f.closed || errors.Is(err, fs.ErrClosed) {
		return experimentalsys.EBADF
	}
	return errnoOf(err)
}

// Dev implements sys.File.
func (f *file) Dev() (uint64, experimentalsys.Errno) { return f.st.Dev, 0 }

// Ino implements sys.File.
func (f *file) Ino() (sys.Inode, experimentalsys.Errno) { return f.st.Ino, 0 }

// IsDir implements sys.File.
func (f *file) IsDir() (bool, experimentalsys.Errno) { return f.isDir(), 0 }

// IsAppend implements sys.File.
func (f *file) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// Stat implements sys.File.
func (f *file) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	fi, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, f.errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Read implements sys.File.
func (f *file) Read(buf []byte) (int, experimentalsys.Errno) {
	if f.isDir() {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Read(buf)
	if err == io.EOF {
		err = nil
	}
	return n, f.errno(err)
}

// Pread implements sys.File.
func (f *file) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.isDir() {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, f.errno(err)
}

// fileOffset is int64 under another name, only so that go vet's stdmethods check, which holds any
// method named Seek with an int64 first parameter to io.Seeker's signature, passes over sys.File's
// Seek: that one returns an errno, not an error.
type fileOffset = int64

// Seek implements sys.File. On a directory only a rewind is meaningful; os.File.Seek rewinds its
// directory reading too.
func (f *file) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if whence < io.SeekStart || whence > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	if f.isDir() && (offset != 0 || whence != io.SeekStart) {
		return 0, experimentalsys.EISDIR
	}
	n, err := f.f.Seek(offset, whence)
	return n, f.errno(err)
}

// Readdir implements sys.File.
func (f *file) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.isDir() {
		return nil, experimentalsys.EBADF
	}
	entries, err := f.f.ReadDir(n)
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		return nil, f.errno(err)
	}
	out := make([]experimentalsys.Dirent, len(entries))
	for i, e := range entries {
		out[i] = experimentalsys.Dirent{Name: e.Name(), Type: e.Type()}
	}
	return out, 0
}

// Write implements sys.File.
func (f *file) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.isDir() {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Write(buf)
	return n, f.errno(err)
}

// Pwrite implements sys.File.
func (f *file) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.isDir() {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.WriteAt(buf, off)
	return n, f.errno(err)
}

// Truncate implements sys.File.
func (f *file) Truncate(size int64) experimentalsys.Errno {
	if f.isDir() {
		return experimentalsys.EISDIR
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return f.errno(f.f.Truncate(size))
}

// Sync implements sys.File.
func (f *file) Sync() experimentalsys.Errno { return f.errno(f.f.Sync()) }

// Datasync implements sys.File (as a full sync: os.File has no fdatasync).
func (f *file) Datasync() experimentalsys.Errno { return f.Sync() }

// Close implements sys.File.
func (f *file) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return errnoOf(f.f.Close())
}
