//go:build unix

package rootfs

import (
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// fixture makes parent/root (the FS's directory) and parent/outside/secret.txt, with links in the
// root that lead out in each way a path can: absolute, climbing, and through another link.
func fixture(t *testing.T) (fsys *FS, root, outside string) {
	t.Helper()
	parent := t.TempDir()
	root, outside = filepath.Join(parent, "root"), filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.txt"): "secret\n",
		filepath.Join(root, "sub", "in.txt"): "inside\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"abs-out":   filepath.Join(outside, "secret.txt"),
		"up":        "..",
		"up-out":    "../outside/secret.txt",
		"chain":     "up-out",
		"abs-in":    filepath.Join(root, "sub", "in.txt"), // refused too: see the package doc
		"rel-in":    "sub/in.txt",
		"sub/back":  "../rel-in",
		"dangling":  filepath.Join(outside, "new.txt"),
		"sub/cycle": "cycle",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys, root, outside
}

func readAll(t *testing.T, f experimentalsys.File) string {
	t.Helper()
	var out []byte
	buf := make([]byte, 4)
	for {
		n, errno := f.Read(buf)
		if errno != 0 {
			t.Fatalf("read: %v", errno)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func TestConfinement(t *testing.T) {
	fsys, root, outside := fixture(t)
	const (
		rd = experimentalsys.O_RDONLY
		wr = experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_APPEND
	)
	for _, tc := range []struct {
		path string
		flag experimentalsys.Oflag
		want experimentalsys.Errno
	}{
		{"abs-out", rd, experimentalsys.EPERM},
		{"abs-out", wr, experimentalsys.EPERM},
		{"up/outside/secret.txt", rd, experimentalsys.EPERM},
		{"up-out", rd, experimentalsys.EPERM},
		{"chain", rd, experimentalsys.EPERM},
		{"dangling", wr, experimentalsys.EPERM}, // would create a file outside
		{"abs-in", rd, experimentalsys.EPERM},
		{"sub/cycle", rd, experimentalsys.ELOOP},
		{"rel-in", experimentalsys.O_RDONLY | experimentalsys.O_NOFOLLOW, experimentalsys.ELOOP},
		{"rel-in", rd, 0},
		{"sub/back", rd, 0},
		{"sub/../sub/in.txt", rd, 0}, // wazero cleans paths; an os.Root resolves ".." inside too
	} {
		f, errno := fsys.OpenFile(tc.path, tc.flag, 0o644)
		if errno != tc.want {
			t.Errorf("OpenFile(%q, %v) = %v, want %v", tc.path, tc.flag, errno, tc.want)
		}
		if errno == 0 {
			if got := readAll(t, f); got != "inside\n" {
				t.Errorf("%s reads %q", tc.path, got)
			}
			f.Close()
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Errorf("a write through a dangling link created a file outside")
	}

	// Every path operation is confined the same way.
	for name, errno := range map[string]experimentalsys.Errno{
		"Stat":                  second(fsys.Stat("abs-out")),
		"Lstat through a link":  second(fsys.Lstat("up/outside/secret.txt")),
		"Mkdir":                 fsys.Mkdir("up/outside/made", 0o755),
		"Chmod":                 fsys.Chmod("abs-out", 0o777),
		"Rename out":            fsys.Rename("sub/in.txt", "up/outside/moved.txt"),
		"Rename in":             fsys.Rename("up/outside/secret.txt", "stolen.txt"),
		"Link out":              fsys.Link("up/outside/secret.txt", "hard"),
		"Unlink":                fsys.Unlink("up/outside/secret.txt"),
		"Rmdir":                 fsys.Rmdir("up/outside"),
		"Utimens":               fsys.Utimens("abs-out", 0, 0),
		"Readlink":              second(fsys.Readlink("up/outside/x")),
		"Symlink absolute":      fsys.Symlink(filepath.Join(outside, "secret.txt"), "mine"),
		"Symlink absolute in":   fsys.Symlink(filepath.Join(root, "sub", "in.txt"), "mine"),
		"Symlink climbing":      fsys.Symlink("../../..", "mine"),
		"Symlink climbing deep": fsys.Symlink("../../outside", "sub/mine"),
	} {
		if errno != experimentalsys.EPERM {
			t.Errorf("%s: %v, want EPERM", name, errno)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "secret\n" {
		t.Errorf("the outside file changed: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the outside directory holds %d entries, want 1", len(entries))
	}

	// Links that stay inside are made and followed; lstat and readlink see links themselves.
	if errno := fsys.Symlink("../rel-in", "sub/mine"); errno != 0 {
		t.Fatalf("Symlink inside: %v", errno)
	}
	if st, errno := fsys.Stat("sub/mine"); errno != 0 || st.Size != int64(len("inside\n")) {
		t.Errorf("Stat through a link inside: %+v %v", st, errno)
	}
	if st, errno := fsys.Lstat("abs-out"); errno != 0 || st.Mode&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a link out: %v %v", st.Mode, errno)
	}
	if dst, errno := fsys.Readlink("sub/mine"); errno != 0 || dst != "../rel-in" {
		t.Errorf("Readlink: %q %v", dst, errno)
	}
	if errno := fsys.Link("sub/in.txt", "hard"); errno != 0 {
		t.Errorf("Link inside: %v", errno)
	}
	if errno := fsys.Rename("hard", "sub/renamed"); errno != 0 {
		t.Errorf("Rename inside: %v", errno)
	}
	if _, errno := fsys.OpenFile("..", experimentalsys.O_RDONLY, 0); errno != experimentalsys.EPERM {
		t.Errorf("OpenFile(..): %v", errno)
	}
}

func second[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }

func TestInside(t *testing.T) {
	for _, tc := range []struct {
		link, target string
		want         bool
	}{
		{"a", "b", true},
		{"a", "sub/../b", true},
		{"d/a", "../b", true},
		{"d/e/a", "../../b", true},
		{"a", "..", false},
		{"a", "../x", false},
		{"d/a", "../../x", false},
		{"d/a", "x/../../../y", false},
		{"a", "/etc/passwd", false},
		{"a", "", false},
	} {
		if got := Inside(tc.link, tc.target); got != tc.want {
			t.Errorf("Inside(%q, %q) = %v, want %v", tc.link, tc.target, got, tc.want)
		}
	}
}

// TestFileUse exercises what a guest does with a file through wazero's WASI: create, write, append,
// read back at an offset, seek, truncate, sync, stat, list and rewind a directory, remove.
func TestFileUse(t *testing.T) {
	fsys, root, _ := fixture(t)
	f, errno := fsys.OpenFile("sub/new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o640)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := f.Write([]byte("hello world\n")); errno != 0 || n != 12 {
		t.Fatalf("write: %d %v", n, errno)
	}
	if n, errno := f.Pwrite([]byte("W"), 6); errno != 0 || n != 1 {
		t.Fatalf("pwrite: %d %v", n, errno)
	}
	buf := make([]byte, 5)
	if n, errno := f.Pread(buf, 6); errno != 0 || string(buf[:n]) != "World" {
		t.Fatalf("pread: %q %v", buf[:n], errno)
	}
	if off, errno := f.Seek(-6, io.SeekEnd); errno != 0 || off != 6 {
		t.Fatalf("seek: %d %v", off, errno)
	}
	if got := readAll(t, f); got != "World\n" {
		t.Fatalf("read after seek: %q", got)
	}
	if errno := f.Truncate(5); errno != 0 {
		t.Fatal(errno)
	}
	if errno := f.Sync(); errno != 0 {
		t.Fatal(errno)
	}
	if errno := f.Datasync(); errno != 0 {
		t.Fatal(errno)
	}
	st, errno := f.Stat()
	if errno != 0 || st.Size != 5 || st.Mode.Perm() != 0o640&^umask() || !st.Mode.IsRegular() {
		t.Fatalf("stat: %+v %v", st, errno)
	}
	if dev, _ := f.Dev(); dev != st.Dev {
		t.Errorf("Dev %d, Stat says %d", dev, st.Dev)
	}
	if ino, _ := f.Ino(); ino != st.Ino || ino == 0 {
		t.Errorf("Ino %d, Stat says %d", ino, st.Ino)
	}
	if isDir, _ := f.IsDir(); isDir || f.IsAppend() {
		t.Errorf("IsDir %v IsAppend %v", isDir, f.IsAppend())
	}
	if errno := f.Close(); errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("write after close: %v", errno)
	}
	if errno := f.Close(); errno != 0 {
		t.Errorf("second close: %v", errno)
	}

	a, errno := fsys.OpenFile("sub/new.txt", experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := a.Write([]byte("!\n")); errno != 0 || !a.IsAppend() {
		t.Fatalf("append: %v", errno)
	}
	a.Close()
	if b, _ := os.ReadFile(filepath.Join(root, "sub", "new.txt")); string(b) != "hello!\n" {
		t.Fatalf("file holds %q", b)
	}
	if _, errno := fsys.OpenFile("sub/new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o640); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL on an existing file: %v", errno)
	}
	if _, errno := fsys.OpenFile("sub/new.txt", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); errno != experimentalsys.ENOTDIR {
		t.Errorf("O_DIRECTORY on a file: %v", errno)
	}

	// A directory lists, in pages, and rewinds; a file cannot be read as one.
	if errno := fsys.Mkdir("sub/dir", 0o755); errno != 0 {
		t.Fatal(errno)
	}
	if errno := fsys.Mkdir("sub/dir", 0o755); errno != experimentalsys.EEXIST {
		t.Errorf("second mkdir: %v", errno)
	}
	if errno := fsys.Mkdir("nowhere/dir", 0o755); errno != experimentalsys.ENOENT {
		t.Errorf("mkdir in a missing directory: %v", errno)
	}
	d, errno := fsys.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer d.Close()
	list := func() []string {
		var names []string
		for {
			ents, errno := d.Readdir(2)
			if errno != 0 {
				t.Fatal(errno)
			}
			for _, e := range ents {
				names = append(names, e.Name)
			}
			if len(ents) < 2 {
				slices.Sort(names)
				return names
			}
		}
	}
	want := []string{"back", "cycle", "dir", "in.txt", "new.txt"}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("readdir: %v, want %v", got, want)
	}
	if _, errno := d.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	if got := list(); !slices.Equal(got, want) {
		t.Fatalf("readdir after rewind: %v, want %v", got, want)
	}
	if isDir, _ := d.IsDir(); !isDir {
		t.Errorf("a directory says it is not one")
	}
	if _, errno := d.Read(buf); errno != experimentalsys.EISDIR {
		t.Errorf("read of a directory: %v", errno)
	}
	root0, errno := fsys.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	root0.Close()

	// Times, modes, removal.
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if errno := fsys.Utimens("sub/new.txt", experimentalsys.UTIME_OMIT, mtime.UnixNano()); errno != 0 {
		t.Fatal(errno)
	}
	if errno := fsys.Chmod("sub/new.txt", 0o600); errno != 0 {
		t.Fatal(errno)
	}
	if fi, err := os.Stat(filepath.Join(root, "sub", "new.txt")); err != nil || !fi.ModTime().Equal(mtime) || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after Utimens and Chmod: %v %v %v", fi.ModTime(), fi.Mode(), err)
	}
	for name, errno := range map[string]experimentalsys.Errno{
		"Unlink a directory": fsys.Unlink("sub/dir"),
		"Rmdir a file":       fsys.Rmdir("sub/new.txt"),
		"Rmdir non-empty":    fsys.Rmdir("sub"),
	} {
		if errno == 0 {
			t.Errorf("%s succeeded", name)
		}
	}
	if errno := fsys.Unlink("sub/new.txt"); errno != 0 {
		t.Errorf("unlink: %v", errno)
	}
	if errno := fsys.Rmdir("sub/dir"); errno != 0 {
		t.Errorf("rmdir: %v", errno)
	}
	if _, errno := fsys.Stat("sub/new.txt"); errno != experimentalsys.ENOENT {
		t.Errorf("stat of a removed file: %v", errno)
	}
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// TestSpecialFilesAreRefusedAtOnce opens a FIFO with no peer (which blocks a plain open for good),
// a socket and a character device: each must fail with ENOTSUP straight away, whatever the flags.
func TestSpecialFilesAreRefusedAtOnce(t *testing.T) {
	fsys, root, _ := fixture(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	special := []string{"fifo", "sock"}
	// A device can be made only with privileges (as root in a container, say); without them, the
	// FIFO and the socket stand for the other kinds.
	if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		special = append(special, "null")
	} else {
		t.Logf("no device: %v", err)
	}
	for _, p := range special {
		for _, flag := range []experimentalsys.Oflag{
			experimentalsys.O_RDONLY,
			experimentalsys.O_WRONLY | experimentalsys.O_APPEND,
			experimentalsys.O_RDWR,
			experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_APPEND,
		} {
			start := time.Now()
			done := make(chan experimentalsys.Errno, 1)
			go func() {
				f, errno := fsys.OpenFile(p, flag, 0o644)
				if errno == 0 {
					f.Close()
				}
				done <- errno
			}()
			select {
			case errno := <-done:
				if errno != experimentalsys.ENOTSUP {
					t.Errorf("OpenFile(%s, %v) = %v, want ENOTSUP", p, flag, errno)
				}
				if d := time.Since(start); d > 100*time.Millisecond {
					t.Errorf("OpenFile(%s, %v) took %s", p, flag, d)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("OpenFile(%s, %v) blocked", p, flag)
			}
		}
	}
	// A stat does not open, so it is allowed: that is how a guest tells what the file is.
	if st, errno := fsys.Lstat("fifo"); errno != 0 || st.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("lstat of the FIFO: %v %v", st.Mode, errno)
	}
	if !strings.Contains(fsys.String(), "root") {
		t.Errorf("String() = %q", fsys.String())
	}
}
