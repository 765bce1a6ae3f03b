//go:build !wasip1

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// BenchmarkSourcePoll reads a 100,000-line file in batches of 2000 lines.
func BenchmarkSourcePoll(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "in.txt")
	var sb strings.Builder
	const lines = 100_000
	for i := range lines {
		fmt.Fprintf(&sb, "line-%d\n", i)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	sdk.SetLogOutput(io.Discard)
	defer sdk.SetLogOutput(os.Stderr)
	b.ReportAllocs()
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		task := &sourceTask{}
		if err := task.Start(sdk.NewTaskContext("bench", 0, dir), sdk.Config{"file": path, "topic": "t", "batch.size": "2000"}); err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			recs, err := task.Poll()
			if err != nil {
				b.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			n += len(recs)
		}
		if n != lines {
			b.Fatalf("read %d lines", n)
		}
		task.Stop()
	}
}
