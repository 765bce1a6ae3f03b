package wasmhost

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchSettle is how long the plugin path must be quiet after a change before it is rescanned: a
// copy of a 5 MB module is many writes, and a rescan in the middle of them would see half a file
// (it would be reported, then loaded on the rescan after the last write).
const watchSettle = 250 * time.Millisecond

// Watch rescans the plugin path (Reload) each time a file in it changes, until Close: a module
// added, replaced or removed there is picked up without a restart. It watches each plugin
// directory and its immediate subdirectories, the places modules are loaded from; a subdirectory
// created later is watched from the next rescan on. Replacing a module by renaming a complete file
// over it is the way to never show a half-written one.
//
// Watch fails when the operating system refuses to watch (inotify limits, say); the host works on,
// without hot reload.
func (h *Host) Watch() error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := h.watchDirs(w); err != nil {
		w.Close()
		return err
	}
	h.watching.Add(1)
	go func() {
		defer h.watching.Done()
		h.watchLoop(w)
	}()
	h.mu.Lock()
	h.watchers = append(h.watchers, w)
	h.mu.Unlock()
	return nil
}

// watchDirs adds the plugin directories and their subdirectories to w (adding one twice is a
// no-op). A directory that does not exist yet is skipped: it is reported as a load error.
func (h *Host) watchDirs(w *fsnotify.Watcher) error {
	var first error
	for _, dir := range h.cfg.PluginPath {
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() {
			abs = filepath.Dir(abs) // a module named directly: a rename over it is an event of its directory
		}
		if err := w.Add(abs); err != nil {
			if !os.IsNotExist(err) && first == nil {
				first = err
			}
			continue
		}
		entries, _ := os.ReadDir(abs)
		for _, e := range entries {
			sub := filepath.Join(abs, e.Name())
			if st, err := os.Stat(sub); err == nil && st.IsDir() {
				w.Add(sub)
			}
		}
	}
	return first
}

func (h *Host) watchLoop(w *fsnotify.Watcher) {
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			settle.Reset(watchSettle)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			h.log.Warn("watching the plugin path", "error", err)
			settle.Reset(watchSettle) // events may have been lost: rescan
		case <-settle.C:
			if h.closing.Load() {
				return
			}
			h.watchDirs(w)
			h.scan(context.Background())
		}
	}
}
