package wasmhost

// The descriptor section (sdk/ABI.md §3.1). Describing a module by calling it means compiling it,
// even in the interpreter, and running its start code: for an 11 MB Go guest most of a cold
// worker's start. A module may instead carry what wc_describe returns in a custom section, which
// the build writes once (EmbedDescriptor, run by the Makefile and pluginbuild); the host then lists
// the module's plugins from the file's bytes alone and checks the module's exports and imports when
// it compiles it, in the background (compile). A module without the section is described by
// calling, as before.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// DescriptorSection is the name of the custom section that holds a module's descriptor: the exact
// bytes its wc_describe returns.
const DescriptorSection = "wasmconnect.descriptor"

// wasmSection is one section of a module's binary: its id, its name (custom sections only) and the
// bytes it spans in the binary, header included.
type wasmSection struct {
	id         byte
	name       string
	start, end int // the whole section: id byte to the end of its contents
	payload    int // where a custom section's contents start, after its name
}

// sections splits a module's binary into its sections without decoding them; bytes that are not a
// well-formed sequence of sections are an error (the compiler says more about them).
func sections(b []byte) ([]wasmSection, error) {
	if len(b) < 8 || !bytes.HasPrefix(b, []byte("\x00asm")) {
		return nil, errors.New("not a WebAssembly module")
	}
	var out []wasmSection
	for off := 8; off < len(b); {
		s := wasmSection{id: b[off], start: off}
		size, n := binary.Uvarint(b[off+1:])
		if n <= 0 || size > uint64(len(b)-off-1-n) {
			return nil, fmt.Errorf("section at byte %d: bad size", off)
		}
		body := off + 1 + n
		s.end = body + int(size)
		if s.id == 0 {
			l, k := binary.Uvarint(b[body:s.end])
			if k <= 0 || l > uint64(s.end-body-k) {
				return nil, fmt.Errorf("custom section at byte %d: bad name", off)
			}
			s.name = string(b[body+k : body+k+int(l)])
			s.payload = body + k + int(l)
		}
		out = append(out, s)
		off = s.end
	}
	return out, nil
}

// MaxDescriptorBytes bounds the contents of a descriptor section (sdk/ABI.md §3.1). A host reads
// the section of every module on the plugin path at start, before anything else bounds the module
// (the memory limit applies when it compiles), and keeps the descriptor until the module compiles:
// without a bound, a section megabytes long (a descriptor padded, or one a toolchain wrote wrong)
// would cost that much memory and JSON parsing per module, in every worker. The largest built-in
// descriptor, the transformations', is 33 KB; 1 MiB leaves thirty times that.
const MaxDescriptorBytes = 1 << 20

// descriptorSection returns the contents of b's descriptor section, if it has one that can be
// found; a module whose sections do not parse is left to the compiler to refuse. A module with
// more than one such section, or one over MaxDescriptorBytes, is an error: which of two
// descriptors a host believed would be a guess.
func descriptorSection(b []byte) ([]byte, bool, error) {
	ss, err := sections(b)
	if err != nil {
		return nil, false, nil
	}
	var found []wasmSection
	for _, s := range ss {
		if s.id == 0 && s.name == DescriptorSection {
			found = append(found, s)
		}
	}
	switch {
	case len(found) == 0:
		return nil, false, nil
	case len(found) > 1:
		at := make([]string, len(found))
		for i, s := range found {
			at[i] = fmt.Sprint(s.start)
		}
		return nil, false, fmt.Errorf("%d custom sections %s (at bytes %s); a module carries at most one (sdk/ABI.md §3.1): write it again with wasmconnect plugin embed, which replaces them",
			len(found), DescriptorSection, strings.Join(at, ", "))
	}
	s := found[0]
	if n := s.end - s.payload; n > MaxDescriptorBytes {
		return nil, false, fmt.Errorf("custom section %s: %d bytes (%s), over the limit of %s (sdk/ABI.md §3.1)",
			DescriptorSection, n, mib(uint64(n)), mib(MaxDescriptorBytes))
	}
	return b[s.payload:s.end], true, nil
}

// withDescriptorSection returns b without its descriptor sections and with one holding desc
// appended (custom sections may come anywhere; the last place changes no other section's offset).
func withDescriptorSection(b, desc []byte) ([]byte, error) {
	if len(desc) > MaxDescriptorBytes {
		return nil, fmt.Errorf("the descriptor is %d bytes (%s), over the limit of %s for its custom section %s (sdk/ABI.md §3.1)",
			len(desc), mib(uint64(len(desc))), mib(MaxDescriptorBytes), DescriptorSection)
	}
	ss, err := sections(b)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), b[:8]...)
	for _, s := range ss {
		if s.id != 0 || s.name != DescriptorSection {
			out = append(out, b[s.start:s.end]...)
		}
	}
	return appendCustomSection(out, DescriptorSection, desc), nil
}

// appendCustomSection appends to b a custom section named name holding payload.
func appendCustomSection(b []byte, name string, payload []byte) []byte {
	n := binary.AppendUvarint(nil, uint64(len(name)))
	n = append(n, name...)
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(n)+len(payload)))
	b = append(b, n...)
	return append(b, payload...)
}

// EmbedDescriptor describes the module wasm by calling it, as a host does for a module without
// the section (checking its exports, imports and ABI version on the way), and returns wasm with
// the descriptor in its descriptor section, replacing any it had. cfg's limits apply; its plugin
// path and cache are ignored.
func EmbedDescriptor(ctx context.Context, wasm []byte, cfg Config) ([]byte, error) {
	// Bytes that are not sections are said to be so, rather than in the compiler's words.
	if _, err := sections(wasm); err != nil {
		return nil, err
	}
	cfg.PluginPath, cfg.CacheDir = nil, ""
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	d := &describer{h: h}
	defer d.close(ctx)
	m := &module{path: "module.wasm", base: "module.wasm"}
	if err := d.describe(ctx, m, wasm); err != nil {
		return nil, err
	}
	return withDescriptorSection(wasm, m.descriptor)
}

// EmbedDescriptorFile writes the module in the file in with its descriptor section (EmbedDescriptor)
// to the file out, which may be in: `wasmconnect plugin embed` and the Makefile's embeddescriptor
// are this function. out is written whole or not at all (a temporary file in its directory,
// renamed over it), with in's permissions, so that a module that cannot be described, or a failed
// write, leaves both files as they were and a worker watching out's directory never sees half a
// module. An out that is a symbolic link is written through, atomically, to the file it resolves
// to, and stays a link (as sed -i --follow-symlinks does): a plugin directory of links to a build's
// output is the usual case, and replacing the link with a copy would leave the build's file
// without its section and the directory with a module the next build does not update. It returns
// the file it wrote: out, or the file out links to.
func EmbedDescriptorFile(ctx context.Context, in, out string, cfg Config) (string, error) {
	b, err := os.ReadFile(in)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(in)
	if err != nil {
		return "", err
	}
	target, err := linkTarget(out)
	if err != nil {
		return "", err
	}
	embedded, err := EmbedDescriptor(ctx, b, cfg)
	if err != nil {
		return "", err
	}
	return target, writeAtomically(target, embedded, st.Mode().Perm())
}

// linkTarget is the file a write to path must replace: path itself, unless it is a symbolic link,
// then the file the link resolves to. A link that resolves to nothing is an error rather than a
// file created wherever it points.
func linkTarget(path string) (string, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode()&fs.ModeSymlink == 0) {
		return path, nil
	}
	if err != nil {
		return "", err
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("cannot write through the symbolic link %s: %w", path, err)
	}
	return target, nil
}

// writeAtomically replaces file with b, mode perm: a temporary file beside it, renamed over it.
func writeAtomically(file string, b []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".embed-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
