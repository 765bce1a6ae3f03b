package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// BenchmarkOpen opens and closes a file two directories down, as a guest's open reaches the host:
// through wazero's DirFS (what WithDirMount mounts, which follows links out) and through an FS.
// The package doc quotes the figures.
//
//	go test -run '^$' -bench Open ./wasmhost/internal/rootfs/
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "file.txt"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	confined, err := New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer confined.Close()
	for _, fsys := range []struct {
		name string
		fs   experimentalsys.FS
	}{{"DirFS", sysfs.DirFS(dir)}, {"rootfs", confined}} {
		b.Run(fsys.name, func(b *testing.B) {
			for b.Loop() {
				f, errno := fsys.fs.OpenFile("a/b/file.txt", experimentalsys.O_RDONLY, 0)
				if errno != 0 {
					b.Fatal(errno)
				}
				f.Close()
			}
		})
	}
}
