// Package pgtest starts a real PostgreSQL server for tests: initdb and pg_ctl of the installed
// PostgreSQL (Debian's postgresql package) in a temporary data directory, listening on a free
// loopback port, with password (SCRAM) authentication over TCP. Running as root, the server runs as
// an unprivileged user (postgres, else nobody), as PostgreSQL refuses to run as root.
//
// A test that cannot start the server fails; it never skips: the connectors it tests need a real
// database, and a skipped test would hide that none was there.
//
//	srv := pgtest.Start(t, pgtest.Options{Settings: map[string]string{"wal_level": "logical"}})
//	conn := srv.Connect(t) // a pgx connection as the superuser
//	url := srv.JDBCURL()   // jdbc:postgresql://127.0.0.1:port/test
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options change how the server starts.
type Options struct {
	// Settings are server settings passed as -c name=value, e.g. wal_level=logical for logical
	// replication. They override the defaults (fsync=off and the like, which make tests fast).
	Settings map[string]string
}

// Server is a running PostgreSQL server, stopped and removed when the test ends.
type Server struct {
	Host     string // 127.0.0.1
	Port     int
	User     string // the superuser
	Password string
	Database string
	Bin      string // the directory of initdb, pg_ctl, psql
	dir      string
	cred     *syscall.Credential
}

// defaults make a throwaway server fast: nothing it writes has to survive a crash of the machine.
var defaults = map[string]string{
	"fsync":              "off",
	"synchronous_commit": "off",
	"full_page_writes":   "off",
	"max_connections":    "50",
	"shared_buffers":     "32MB",
}

// BinDir finds the directory of PostgreSQL's server programs: the newest
// /usr/lib/postgresql/<version>/bin (Debian), else the directory of initdb on PATH.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb and no initdb on PATH (Debian: apt-get install postgresql)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initializes and starts a server; the test fails if it cannot.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := start(opts)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.dir, "server.log")); err == nil {
				if len(b) > 8000 {
					b = b[len(b)-8000:]
				}
				t.Logf("---- PostgreSQL log (tail) ----\n%s", b)
			}
		}
		s.Stop()
	})
	return s
}

func start(opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", User: "test", Password: "pgtest-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Database: "test", Bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	settings := map[string]string{}
	for k, v := range defaults {
		settings[k] = v
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	// A free port can be taken between finding it and the server binding it: try a few.
	for attempt := 0; ; attempt++ {
		if s.Port, err = freePort(); err == nil {
			if err = s.pgctlStart(settings); err == nil {
				break
			}
		}
		if attempt == 2 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.createDatabase(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// createDatabase creates the test database, connected to the postgres database initdb made.
func (s *Server) createDatabase() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", s.User, s.Password, s.Addr()))
	if err != nil {
		return fmt.Errorf("connect to the started server: %w", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+s.Database); err != nil {
		return fmt.Errorf("create database %s: %w", s.Database, err)
	}
	return nil
}

// unprivileged returns the credential of the user the server runs as when the test runs as root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and neither user postgres nor nobody exists to run PostgreSQL as")
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.Bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

func (s *Server) chown(path string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
}

func (s *Server) initdb() error {
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return err
	}
	pwfile := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	for _, p := range []string{s.dir, pwfile} {
		if err := s.chown(p); err != nil {
			return err
		}
	}
	out, err := s.command("initdb", "-D", filepath.Join(s.dir, "data"), "-U", s.User, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return nil
}

func (s *Server) pgctlStart(settings map[string]string) error {
	opts := []string{"-c", "listen_addresses=" + s.Host, "-c", "port=" + strconv.Itoa(s.Port),
		"-c", "unix_socket_directories=" + s.dir}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		opts = append(opts, "-c", k+"="+settings[k])
	}
	out, err := s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-l", filepath.Join(s.dir, "server.log"),
		"-w", "-t", "60", "-o", strings.Join(opts, " "), "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").Run()
		return fmt.Errorf("pg_ctl start on port %d: %v\n%s\n%s", s.Port, err, out, log)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops the server at once and removes its data directory.
func (s *Server) Stop() {
	if s.dir == "" {
		return
	}
	s.command("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop").Run()
	os.RemoveAll(s.dir)
	s.dir = ""
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// DSN is a libpq URL for the superuser and the test database.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", s.User, s.Password, s.Addr(), s.Database)
}

// JDBCURL is the server's URL as the JDBC connectors' connection.url writes it.
func (s *Server) JDBCURL() string {
	return fmt.Sprintf("jdbc:postgresql://%s/%s", s.Addr(), s.Database)
}

// Connect opens a connection as the superuser, closed when the test ends.
func (s *Server) Connect(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Exec runs SQL statements (simple protocol; several may be separated by semicolons).
func (s *Server) Exec(t testing.TB, sql string) {
	t.Helper()
	c := s.Connect(t)
	if _, err := c.Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
	c.Close(context.Background())
}

// Psql returns a psql command connected to the server as the superuser.
func (s *Server) Psql(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.Bin, "psql"), append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", s.DSN()}, args...)...)
	return cmd
}
