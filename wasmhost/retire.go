package wasmhost

import (
	"context"
	"fmt"
)

// A module replaced or removed by a rescan leaves the catalogue at once, but the sessions that
// hold an instance of it run on; its compiled code (tens of MiB for a Go guest) is closed when the
// last of those instances is, so that replacing a module again and again does not grow the worker.

// use counts a new instance of m; it fails for a module whose code was released.
func (m *module) use() error {
	m.life.Lock()
	defer m.life.Unlock()
	if m.retired && m.users == 0 {
		return fmt.Errorf("wasmhost: module %s was replaced or removed from the plugin path; resolve the plugin again", m.path)
	}
	m.users++
	return nil
}

// release counts an instance of m gone, and closes m's code after the last one of a retired m.
func (h *Host) release(m *module) {
	m.life.Lock()
	m.users--
	last := m.retired && m.users == 0
	m.life.Unlock()
	if last {
		h.closeCompiled(m)
	}
}

// retire marks m out of the catalogue, and closes its code unless an instance still runs it.
func (h *Host) retire(m *module) {
	m.life.Lock()
	m.retired = true
	last := m.users == 0
	m.life.Unlock()
	if last {
		h.closeCompiled(m)
	}
}

// closeCompiled closes m's compiled code, after any compile of it still running: no instance can
// be created from m any more (use refuses it).
func (h *Host) closeCompiled(m *module) {
	h.compiling.Add(1)
	go func() {
		defer h.compiling.Done()
		m.compileOnce.Do(func() {
			m.compileErr = fmt.Errorf("wasmhost: module %s was replaced or removed before its first use", m.path)
		})
		if m.compiled != nil && !h.closing.Load() {
			m.compiled.Close(context.Background())
		}
	}()
}
