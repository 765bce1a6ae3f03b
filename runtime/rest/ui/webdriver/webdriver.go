// Package webdriver drives a headless Chromium through chromedriver's W3C WebDriver HTTP API, for
// the web console's browser tests. It needs only net/http: chromedriver starts the browser, and
// every command is a JSON request to it.
//
//	b, err := webdriver.Start(t.TempDir())
//	if err != nil { t.Fatal(err) } // never skip: a console nobody loaded is not tested
//	defer b.Close()
//	b.Navigate(url)
//	el, err := b.WaitFor(`button[data-action="pause"]`, 10*time.Second)
//	el.Click()
//
// The browser runs with Debian's chromium and chromium-driver (apt-get install chromium
// chromium-driver), without sandbox, GPU, QUIC or any of Chromium's own network traffic, in a
// fresh profile, since test machines have no outside network.
package webdriver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Install is the command that installs what Start needs on Debian.
const Install = "apt-get install chromium chromium-driver"

// Browser is one browser session.
type Browser struct {
	base    string // chromedriver's URL, with the session
	driver  *exec.Cmd
	logs    *syncBuffer
	client  *http.Client
	closeMu sync.Once
}

// Args are the browser's command line flags: headless, and quiet on the network.
var Args = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1400,1000",
}

// Start starts chromedriver and a browser session with a profile under dir. The error names what
// is missing and how to install it.
func Start(dir string) (*Browser, error) {
	chromium, err := lookPath("chromium", "chromium-browser", "google-chrome")
	if err != nil {
		return nil, fmt.Errorf("no Chromium to test the console in (%s): %w", Install, err)
	}
	driverPath, err := lookPath("chromedriver")
	if err != nil {
		return nil, fmt.Errorf("no chromedriver to drive Chromium (%s): %w", Install, err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &Browser{logs: &syncBuffer{}, client: &http.Client{Timeout: 60 * time.Second}}
	b.driver = exec.Command(driverPath, fmt.Sprintf("--port=%d", port), "--allowed-ips=127.0.0.1")
	b.driver.Stdout, b.driver.Stderr = b.logs, b.logs
	if err := b.driver.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", driverPath, err)
	}
	driverURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := b.waitDriver(driverURL, 20*time.Second); err != nil {
		b.stopDriver()
		return nil, err
	}

	profile := filepath.Join(dir, "chromium-profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		b.stopDriver()
		return nil, err
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args":   append(append([]string{}, Args...), "--user-data-dir="+profile),
		},
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
	}}}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	b.base = driverURL
	if err := b.command(http.MethodPost, "/session", caps, &session); err != nil {
		b.stopDriver()
		return nil, fmt.Errorf("starting %s through chromedriver: %w\nchromedriver's output:\n%s", chromium, err, b.logs.String())
	}
	b.base = driverURL + "/session/" + session.SessionID
	return b, nil
}

func lookPath(names ...string) (string, error) {
	var firstErr error
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err == nil {
			return p, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", firstErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (b *Browser) waitDriver(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := b.client.Get(url + "/status")
		if err == nil {
			var st struct {
				Value struct {
					Ready bool `json:"ready"`
				} `json:"value"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil && st.Value.Ready {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chromedriver did not answer on %s within %s: %v\n%s", url, within, err, b.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close ends the session (the browser quits) and stops chromedriver.
func (b *Browser) Close() {
	b.closeMu.Do(func() {
		_ = b.command(http.MethodDelete, "", nil, nil)
		b.stopDriver()
	})
}

func (b *Browser) stopDriver() {
	_ = b.driver.Process.Kill()
	_ = b.driver.Wait()
}

// Error is an error WebDriver answered, e.g. "no such element".
type Error struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// command sends one WebDriver command and decodes its "value" into out.
func (b *Browser) command(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		j, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(j)
	} else if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(env.Value, &e) == nil && e.Code != "" {
			return &e
		}
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

// Navigate loads url and waits for it to load.
func (b *Browser) Navigate(url string) error {
	return b.command(http.MethodPost, "/url", map[string]string{"url": url}, nil)
}

// Eval runs script (a function body: "return document.title") with args and decodes what it
// returns into out (nil to ignore it).
func (b *Browser) Eval(out any, script string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return b.command(http.MethodPost, "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// Element is an element of the page.
type Element struct {
	b  *Browser
	id string
}

// Find returns the first element matching the CSS selector, or an *Error "no such element".
func (b *Browser) Find(css string) (Element, error) {
	var ref map[string]string
	if err := b.command(http.MethodPost, "/element", map[string]string{"using": "css selector", "value": css}, &ref); err != nil {
		return Element{}, fmt.Errorf("%s: %w", css, err)
	}
	return element(b, ref)
}

// element reads an element reference: an object with one member, whose name is the W3C constant
// ("element-6066-11e4-a5ec-4f96d9d6c9e3"), or another one in chromedriver's releases that differ.
func element(b *Browser, ref map[string]string) (Element, error) {
	if len(ref) != 1 {
		return Element{}, fmt.Errorf("webdriver: element reference %v has not one member", ref)
	}
	for _, id := range ref {
		return Element{b, id}, nil
	}
	panic("unreachable")
}

// Count returns how many elements match the CSS selector.
func (b *Browser) Count(css string) (int, error) {
	var refs []map[string]string
	err := b.command(http.MethodPost, "/elements", map[string]string{"using": "css selector", "value": css}, &refs)
	return len(refs), err
}

// WaitFor waits until an element matches css and, if cond is given, cond holds for its text.
func (b *Browser) WaitFor(css string, within time.Duration, cond ...func(text string) bool) (Element, error) {
	deadline := time.Now().Add(within)
	var last error
	for {
		e, err := b.Find(css)
		if err == nil {
			text, err := e.Text()
			if err == nil && (len(cond) == 0 || cond[0](text)) {
				return e, nil
			}
			last = fmt.Errorf("%s: text %q (%v)", css, text, err)
		} else {
			last = err
		}
		if time.Now().After(deadline) {
			return Element{}, fmt.Errorf("waited %s: %w", within, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Click clicks the element.
func (e Element) Click() error {
	return e.b.command(http.MethodPost, "/element/"+e.id+"/click", nil, nil)
}

// Type types text into the element.
func (e Element) Type(text string) error {
	return e.b.command(http.MethodPost, "/element/"+e.id+"/value", map[string]string{"text": text}, nil)
}

// Text is the element's rendered text.
func (e Element) Text() (string, error) {
	var s string
	err := e.b.command(http.MethodGet, "/element/"+e.id+"/text", nil, &s)
	return s, err
}

// Screenshot saves a PNG of the window to path, creating its directory.
func (b *Browser) Screenshot(path string) error {
	var b64 string
	if err := b.command(http.MethodGet, "/screenshot", nil, &b64); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// LogEntry is a line of the browser's console.
type LogEntry struct {
	Level   string `json:"level"` // SEVERE, WARNING, INFO, ...
	Message string `json:"message"`
}

// ConsoleLog returns the browser console's lines since the last call (chromedriver's log API).
func (b *Browser) ConsoleLog() ([]LogEntry, error) {
	var entries []LogEntry
	err := b.command(http.MethodPost, "/se/log", map[string]string{"type": "browser"}, &entries)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return entries, nil
}

// syncBuffer collects chromedriver's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
