package rest

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials files
//
// rest.auth.basic.file holds one user a line, "user:hash:role", where hash is a PBKDF2-HMAC-SHA256
// hash in passlib's format, "$pbkdf2-sha256$<iterations>$<salt>$<key>" (salt and key in base64
// without padding, '.' for '+'), as HashPassword makes it or Python's
// passlib.hash.pbkdf2_sha256.hash(password) does; role is read or admin.
//
// rest.auth.tokens.file holds one bearer token a line, "name:$sha256$<hex>:role", where hex is the
// SHA-256 of the token (HashToken, or: printf %s "$TOKEN" | sha256sum). Tokens should be long random
// strings (e.g. openssl rand -base64 32), which is why a fast hash is enough for them.
//
// In both, blank lines and lines starting with '#' are ignored. Files are read again when they change
// (checked at most once a second), so credentials can be rotated without a restart; a file that cannot
// be read or parsed then refuses every request (500) until it is fixed, rather than keep old
// credentials.

// DefaultPBKDF2Iterations is what HashPassword uses: OWASP's 2023 advice for PBKDF2-HMAC-SHA256. A
// successful check is remembered (as a keyed hash in memory), so only the first request of a user, and
// requests with a wrong password, pay for it.
const DefaultPBKDF2Iterations = 600_000

// minPBKDF2Iterations is the fewest iterations a credentials file may use.
const minPBKDF2Iterations = 1000

// reloadInterval is how often a credentials file is checked for changes.
var reloadInterval = time.Second

// ab64 is passlib's "adapted base64": standard alphabet without padding, '.' instead of '+'.
func ab64Encode(b []byte) string {
	return strings.ReplaceAll(base64.RawStdEncoding.EncodeToString(b), "+", ".")
}

func ab64Decode(s string) ([]byte, error) {
	s = strings.TrimRight(strings.ReplaceAll(s, ".", "+"), "=")
	return base64.RawStdEncoding.DecodeString(s)
}

// HashPassword returns the hash of password for rest.auth.basic.file, with a random salt and
// DefaultPBKDF2Iterations.
func HashPassword(password string) (string, error) {
	return hashPassword(password, DefaultPBKDF2Iterations)
}

func hashPassword(password string, iter int) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$pbkdf2-sha256$%d$%s$%s", iter, ab64Encode(salt), ab64Encode(key)), nil
}

// HashToken returns the hash of a bearer token for rest.auth.tokens.file.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "$sha256$" + hex.EncodeToString(sum[:])
}

// pbkdf2Hash is a parsed password hash.
type pbkdf2Hash struct {
	iter      int
	salt, key []byte
}

func parsePasswordHash(s string) (pbkdf2Hash, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "pbkdf2-sha256" {
		return pbkdf2Hash{}, errors.New(`the hash must have the form $pbkdf2-sha256$<iterations>$<salt>$<key> (see rest.HashPassword)`)
	}
	iter, err := strconv.Atoi(parts[2])
	if err != nil || iter < minPBKDF2Iterations {
		return pbkdf2Hash{}, fmt.Errorf("the iteration count %q must be an integer of at least %d", parts[2], minPBKDF2Iterations)
	}
	salt, err := ab64Decode(parts[3])
	if err != nil || len(salt) < 8 {
		return pbkdf2Hash{}, errors.New("the salt must be at least 8 bytes in base64")
	}
	key, err := ab64Decode(parts[4])
	if err != nil || len(key) < 16 {
		return pbkdf2Hash{}, errors.New("the key must be at least 16 bytes in base64")
	}
	return pbkdf2Hash{iter: iter, salt: salt, key: key}, nil
}

func (h pbkdf2Hash) matches(password string) bool {
	key, err := pbkdf2.Key(sha256.New, password, h.salt, h.iter, len(h.key))
	return err == nil && subtle.ConstantTimeCompare(key, h.key) == 1
}

// credFile is a credentials file, read again when it changes.
type credFile[E any] struct {
	path  string
	parse func([]byte) (E, error)

	mu      sync.Mutex
	checked time.Time
	modTime time.Time
	size    int64
	entries E
	err     error
	version int // counts successful loads
}

func loadCredFile[E any](path string, parse func([]byte) (E, error)) (*credFile[E], error) {
	f := &credFile[E]{path: path, parse: parse}
	if _, _, err := f.get(); err != nil {
		return nil, err
	}
	return f, nil
}

// get returns the current entries and the load count, reading the file again if it changed.
func (f *credFile[E]) get() (E, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.version > 0 && now.Sub(f.checked) < reloadInterval {
		return f.entries, f.version, f.err
	}
	f.checked = now
	fi, err := os.Stat(f.path)
	if err != nil {
		f.err = err
		return f.entries, f.version, err
	}
	if f.version > 0 && f.err == nil && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		return f.entries, f.version, nil
	}
	b, err := os.ReadFile(f.path)
	if err == nil {
		var e E
		if e, err = f.parse(b); err == nil {
			f.entries, f.modTime, f.size = e, fi.ModTime(), fi.Size()
			f.version++
		}
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", f.path, err)
	}
	f.err = err
	return f.entries, f.version, err
}

// credLine is one "name:secret:role" line.
type credLine struct {
	name, secret string
	role         Role
}

// parseCredLines splits a credentials file into lines of three fields. The secret may not contain ':'.
func parseCredLines(b []byte, what string) ([]credLine, error) {
	var out []credLine
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: expected %s:hash:role", n, what)
		}
		name := strings.TrimSpace(f[0])
		role, ok := ParseRole(f[2])
		switch {
		case name == "":
			return nil, fmt.Errorf("line %d: the %s is empty", n, what)
		case seen[name]:
			return nil, fmt.Errorf("line %d: %s %q appears twice", n, what, name)
		case !ok:
			return nil, fmt.Errorf("line %d: the role %q must be read or admin", n, strings.TrimSpace(f[2]))
		}
		seen[name] = true
		out = append(out, credLine{name: name, secret: strings.TrimSpace(f[1]), role: role})
	}
	return out, sc.Err()
}

// BasicAuth authenticates HTTP basic credentials against a credentials file (rest.auth.basic.file).
type BasicAuth struct {
	file *credFile[map[string]basicUser]

	// A successful check is remembered as an HMAC of user and password under a key of this process,
	// so that a polling UI does not cost a PBKDF2 per request.
	cacheKey []byte
	mu       sync.Mutex
	cacheVer int
	cache    map[string][]byte

	sem chan struct{} // bounds the CPU spent on PBKDF2 at once
}

type basicUser struct {
	hash pbkdf2Hash
	role Role
}

// NewBasicAuthFile reads a basic credentials file (see HashPassword for its format).
func NewBasicAuthFile(path string) (*BasicAuth, error) {
	f, err := loadCredFile(path, parseBasicFile)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &BasicAuth{file: f, cacheKey: key, cache: map[string][]byte{}, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}, nil
}

func parseBasicFile(b []byte) (map[string]basicUser, error) {
	lines, err := parseCredLines(b, "user")
	if err != nil {
		return nil, err
	}
	out := make(map[string]basicUser, len(lines))
	for _, l := range lines {
		h, err := parsePasswordHash(l.secret)
		if err != nil {
			return nil, fmt.Errorf("user %s: %w", l.name, err)
		}
		out[l.name] = basicUser{hash: h, role: l.role}
	}
	return out, nil
}

// Authenticate checks the request's basic credentials.
func (a *BasicAuth) Authenticate(r *http.Request) (Principal, error) {
	user, password, ok := r.BasicAuth()
	if !ok {
		return Principal{}, ErrNoCredentials
	}
	users, ver, err := a.file.get()
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrAuthUnavailable, err)
	}
	mac := hmac.New(sha256.New, a.cacheKey)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(password))
	sum := mac.Sum(nil)

	u, known := users[user]
	a.mu.Lock()
	if a.cacheVer != ver {
		a.cache, a.cacheVer = map[string][]byte{}, ver
	}
	cached := a.cache[user]
	a.mu.Unlock()
	if known && cached != nil && hmac.Equal(cached, sum) {
		return Principal{Name: user, Role: u.role}, nil
	}

	a.sem <- struct{}{}
	var good bool
	if known {
		good = u.hash.matches(password)
	} else {
		// As much work as for a known user, so that timing does not tell which users exist.
		dummyHash(users).matches(password)
	}
	<-a.sem
	if !good {
		return Principal{}, errors.New("invalid user or password")
	}
	a.mu.Lock()
	if a.cacheVer == ver {
		a.cache[user] = sum
	}
	a.mu.Unlock()
	return Principal{Name: user, Role: u.role}, nil
}

// dummyHash is a hash with the iteration count of the file's users, for unknown users.
func dummyHash(users map[string]basicUser) pbkdf2Hash {
	iter := minPBKDF2Iterations
	for _, u := range users {
		iter = max(iter, u.hash.iter)
	}
	return pbkdf2Hash{iter: iter, salt: make([]byte, 16), key: make([]byte, sha256.Size)}
}

// Challenges returns the Basic challenge.
func (a *BasicAuth) Challenges() []string {
	return []string{`Basic realm="` + Realm + `", charset="UTF-8"`}
}

// TokenAuth authenticates bearer tokens against a tokens file (rest.auth.tokens.file).
type TokenAuth struct {
	file *credFile[[]tokenEntry]
}

type tokenEntry struct {
	name string
	hash []byte
	role Role
}

// NewTokenFile reads a tokens file (see HashToken for its format).
func NewTokenFile(path string) (*TokenAuth, error) {
	f, err := loadCredFile(path, parseTokenFile)
	if err != nil {
		return nil, err
	}
	return &TokenAuth{file: f}, nil
}

func parseTokenFile(b []byte) ([]tokenEntry, error) {
	lines, err := parseCredLines(b, "name")
	if err != nil {
		return nil, err
	}
	out := make([]tokenEntry, 0, len(lines))
	for _, l := range lines {
		hexSum, ok := strings.CutPrefix(l.secret, "$sha256$")
		sum, err := hex.DecodeString(hexSum)
		if !ok || err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("token %s: the hash must have the form $sha256$<64 hex digits> (see rest.HashToken)", l.name)
		}
		out = append(out, tokenEntry{name: l.name, hash: sum, role: l.role})
	}
	return out, nil
}

// Authenticate checks the request's bearer token.
func (a *TokenAuth) Authenticate(r *http.Request) (Principal, error) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "bearer") {
		return Principal{}, ErrNoCredentials
	}
	token = strings.TrimSpace(token)
	tokens, _, err := a.file.get()
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrAuthUnavailable, err)
	}
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i, t := range tokens {
		if subtle.ConstantTimeCompare(sum[:], t.hash) == 1 {
			found = i
		}
	}
	if token == "" || found < 0 {
		return Principal{}, errors.New("invalid token")
	}
	return Principal{Name: tokens[found].name, Role: tokens[found].role}, nil
}

// Challenges returns the Bearer challenge.
func (a *TokenAuth) Challenges() []string {
	return []string{`Bearer realm="` + Realm + `"`}
}
