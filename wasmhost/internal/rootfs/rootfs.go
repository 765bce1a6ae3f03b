// Package rootfs is the file system a plugin sees: a wazero experimental sys.FS confined to one
// host directory by an os.Root, after every symbolic link is resolved.
//
// wazero's own directory mount (sysfs.DirFS) joins the guest's path to the directory and lets the
// kernel follow links, so a link in the directory that leads out (placed by anyone, the plugin
// included) gives the guest the file it points to; wazero's maintainers leave WASI sandboxing to
// the embedder. An os.Root resolves each path one component at a time and fails any that would
// leave the directory, whether through "..", an absolute link or a link to a link. This package
// puts every sys.FS operation through one and adds what an os.Root does not decide:
//
//   - A path that leaves the directory fails with EPERM, the errno wazero itself gives a ".." or
//     absolute path, so a guest sees one error for every way out. (os.Root reports it as "path
//     escapes from parent", which is no errno.)
//   - Symlink refuses (EPERM) a target that is absolute or whose lexical resolution from the link's
//     directory climbs out of the root. An os.Root creates any link and confines only its use, so
//     the link would merely fail later; refusing it at once keeps the directory free of traps for
//     whoever uses it next. Absolute targets are refused even when they point inside the root:
//     following them would need the root's host path, which the guest has no business knowing,
//     and an os.Root refuses to follow them anyway.
//   - OpenFile opens only regular files and directories. It opens with O_NONBLOCK, so that a FIFO
//     without a peer, a tty or a device cannot block the guest's call (and its task) where no call
//     bound reaches, then checks the type of what it opened and refuses the rest with ENOTSUP.
//   - Hard links and renames are confined on both sides, as any path is. A hard link the operator
//     made to a file elsewhere is that file, and is served: it cannot be told from any other.
//
// # Notes
//
//   - An os.Root opens each component of a path, so an open costs a few system calls per
//     directory level more than a plain open (BenchmarkOpen, a file two levels down: ~10 µs
//     against ~6 µs through wazero's DirFS; a task opens its file once).
//   - Inode numbers of directory entries are not read (Dirent.Ino is 0): Go and wasi-libc guests
//     accept that, and reading them would cost a stat per entry.
package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FS is a sys.FS confined to one directory. It is safe for concurrent use by several instances.
type FS struct {
	experimentalsys.UnimplementedFS
	root *os.Root
}

// New opens dir as the root of an FS. Close releases it.
func New(dir string) (*FS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &FS{root: r}, nil
}

// Close releases the directory. Files still open stay usable.
func (f *FS) Close() error { return f.root.Close() }

// String names the directory, for wazero's messages.
func (f *FS) String() string { return f.root.Name() }

// name turns wazero's path (fs.ValidPath, "." for the root, perhaps with a trailing slash) into
// one for the os.Root.
func name(p string) string {
	if p == "" || p == "/" {
		return "."
	}
	return p
}

// OpenFile implements sys.FS.
func (f *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	p = name(p)
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		// An os.Root follows a final link even when told O_NOFOLLOW: answer what the kernel would.
		if fi, err := f.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	osf, err := f.root.OpenFile(p, osFlag(flag)|openNonblock, perm&fs.ModePerm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return nil, experimentalsys.ENOTSUP // a FIFO opened to write, with no reader
		}
		return nil, errnoOf(err)
	}
	fi, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, errnoOf(err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		osf.Close()
		return nil, experimentalsys.ENOTSUP
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		osf.Close()
		return nil, experimentalsys.ENOTDIR // where the platform has no O_DIRECTORY
	}
	if flag&experimentalsys.O_NONBLOCK == 0 {
		if err := clearNonblock(osf); err != nil {
			osf.Close()
			return nil, errnoOf(err)
		}
	}
	return newFile(osf, flag, fi), 0
}

// flagMap pairs a wazero open flag with the host's.
type flagMap struct {
	sys experimentalsys.Oflag
	os  int
}

// osFlag translates wazero's open flags; O_NOFOLLOW is handled by OpenFile, O_NONBLOCK always set
// where the platform has it, O_DSYNC served by the stronger O_SYNC and O_RSYNC left out (Linux's
// equals O_SYNC), as not every platform's syscall package has them.
func osFlag(flag experimentalsys.Oflag) int {
	var out int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		out = os.O_RDWR
	case experimentalsys.O_WRONLY:
		out = os.O_WRONLY
	default:
		out = os.O_RDONLY
	}
	for _, m := range append([]flagMap{
		{experimentalsys.O_APPEND, os.O_APPEND},
		{experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL},
		{experimentalsys.O_SYNC, os.O_SYNC},
		{experimentalsys.O_DSYNC, os.O_SYNC},
		{experimentalsys.O_TRUNC, os.O_TRUNC},
	}, platformFlags...) {
		if flag&m.sys != 0 {
			out |= m.os
		}
	}
	return out
}

// Lstat implements sys.FS.
func (f *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := f.root.Lstat(name(p))
	if err != nil {
		return sys.Stat_t{}, errnoOf(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements sys.FS.
func (f *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := f.root.Stat(name(p))
	if err != nil {
		return sys.Stat_t{}, errnoOf(err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements sys.FS.
func (f *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	errno := errnoOf(f.root.Mkdir(name(p), perm&fs.ModePerm))
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT // as wazero's DirFS: a missing parent
	}
	return errno
}

// Chmod implements sys.FS.
func (f *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return errnoOf(f.root.Chmod(name(p), perm&fs.ModePerm))
}

// Rename implements sys.FS.
func (f *FS) Rename(from, to string) experimentalsys.Errno {
	if from == to {
		return 0
	}
	return errnoOf(f.root.Rename(name(from), name(to)))
}

// Rmdir implements sys.FS.
func (f *FS) Rmdir(p string) experimentalsys.Errno {
	fi, err := f.root.Lstat(name(p))
	if err != nil {
		return errnoOf(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errnoOf(f.root.Remove(name(p)))
}

// Unlink implements sys.FS.
func (f *FS) Unlink(p string) experimentalsys.Errno {
	fi, err := f.root.Lstat(name(p))
	if err != nil {
		return errnoOf(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return errnoOf(f.root.Remove(name(p)))
}

// Link implements sys.FS. Both paths are resolved in the root; like os.Root.Link, a link to a
// symbolic link links the symbolic link, which stays confined when it is followed.
func (f *FS) Link(oldPath, newPath string) experimentalsys.Errno {
	return errnoOf(f.root.Link(name(oldPath), name(newPath)))
}

// Symlink implements sys.FS: it refuses a target that is absolute or climbs out of the root.
func (f *FS) Symlink(target, link string) experimentalsys.Errno {
	if !Inside(link, target) {
		return experimentalsys.EPERM
	}
	return errnoOf(f.root.Symlink(target, name(link)))
}

// Inside reports whether a link at path link (relative to the root) with the given target stays
// inside the root when resolved lexically: the target is relative and does not climb above the
// root from the link's directory.
func Inside(link, target string) bool {
	if target == "" || path.IsAbs(target) || strings.HasPrefix(target, `\`) {
		return false
	}
	resolved := path.Join(path.Dir(strings.TrimSuffix(link, "/")), target)
	return resolved != ".." && !strings.HasPrefix(resolved, "../")
}

// Readlink implements sys.FS.
func (f *FS) Readlink(p string) (string, experimentalsys.Errno) {
	dst, err := f.root.Readlink(name(p))
	if err != nil {
		return "", errnoOf(err)
	}
	return dst, 0
}

// Utimens implements sys.FS.
func (f *FS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return errnoOf(f.root.Chtimes(name(p), timeOf(atim), timeOf(mtim)))
}

// timeOf converts a WASI timestamp; UTIME_OMIT becomes the zero time, which Chtimes leaves alone.
func timeOf(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// errnoOf maps an os.Root error to an errno. The one error an os.Root gives that carries no errno
// is its refusal of a path that leaves the root ("path escapes from parent"); it becomes EPERM.
func errnoOf(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	inner := err
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		inner = pe.Err
	case errors.As(err, &le):
		inner = le.Err
	case errors.As(err, &se):
		inner = se.Err
	}
	var errno syscall.Errno
	if errors.As(inner, &errno) {
		return experimentalsys.UnwrapOSError(errno)
	}
	for _, sentinel := range []error{fs.ErrNotExist, fs.ErrExist, fs.ErrPermission, fs.ErrClosed, fs.ErrInvalid} {
		if errors.Is(inner, sentinel) {
			return experimentalsys.UnwrapOSError(sentinel)
		}
	}
	return experimentalsys.EPERM
}
