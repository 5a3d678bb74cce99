package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Timeouts: a server on this machine starts in about a second (initdb
// included); these only bound a broken one.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
)

// port names the server's socket file (.s.PGSQL.<port>) in its private
// directory; with listen_addresses empty it listens on no TCP port.
const port = 5432

// Server is a private PostgreSQL server: its own data directory and
// socket directory, no TCP, torn down (no process left) when the test
// that started it ends.
type Server struct {
	bin     string // the directory of initdb and postgres
	dir     string // t.TempDir(): the data directory and the log
	sockDir string
	cred    *syscall.Credential // nil: run as the current user
	durable bool
	dbs     atomic.Int64

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Option changes how Start runs the server.
type Option func(*Server)

// Durable keeps PostgreSQL's own defaults for durability (fsync and
// synchronous commit on, full page writes), for benchmarks whose figures
// must be a production server's; without it the server trades them for
// speed, as tests want.
func Durable() Option { return func(s *Server) { s.durable = true } }

// Start starts a server for t (and its subtests), or skips t when
// Debian's PostgreSQL binaries are not installed (fails it instead when
// CI=true: CI's setup installs them). As root (initdb and postgres refuse
// to run as root) the server runs as the postgres system user, or nobody
// when there is none.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := binaries()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v: CI's setup installs Debian's postgresql package", err)
		}
		t.Skipf("pgtest: %v: install Debian's postgresql package to run the PostgreSQL tests", err)
	}
	s := &Server{bin: bin, dir: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	if os.Geteuid() == 0 {
		s.cred, err = serverUser()
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		// The server's user must reach its data directory: t.TempDir()'s
		// own directory (and the one above it, made by the testing
		// package) are 0700 root's.
		for _, d := range []string{s.dir, filepath.Dir(s.dir)} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatalf("pgtest: %v", err)
			}
		}
	}
	// A socket's path must fit 107 bytes: a short private directory, not
	// one under the test's name.
	s.sockDir, err = os.MkdirTemp("", "pgtest")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(s.sockDir) })
	if err := s.own(s.sockDir); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	data := filepath.Join(s.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if err := s.own(data); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	t.Cleanup(func() { s.stop(t) })
	s.start(t)
	return s
}

// binaries finds the directory of initdb and postgres: the newest of
// Debian's /usr/lib/postgresql/<version>/bin, or PATH.
func binaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if executable(filepath.Join(d, "postgres")) && executable(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil && executable(filepath.Join(filepath.Dir(p), "initdb")) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or PATH")
}

func version(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&0o111 != 0
}

// serverUser is who runs the server when the test runs as root.
func serverUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root, and no postgres or nobody user to run the server as")
}

// own gives p to the server's user.
func (s *Server) own(p string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(p, int(s.cred.Uid), int(s.cred.Gid))
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" + s.dir}
	// Its own process group (the server's children with it), killed with
	// the test binary should that die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	return cmd
}

// start runs postgres on the data directory and waits until it takes
// connections.
func (s *Server) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	args := []string{"-D", filepath.Join(s.dir, "data"), "-k", s.sockDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "shared_buffers=16MB", "-c", "max_connections=40",
		"-c", "logging_collector=off"}
	if !s.durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := s.command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("pgtest: starting postgres: %v", err)
	}
	logf.Close()
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return
		}
		select {
		case <-done:
			t.Fatalf("pgtest: postgres exited while starting (%v); its log:\n%s", cmd.ProcessState, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: postgres not taking connections after %v (%v); its log:\n%s", startTimeout, err, s.logTail())
		}
		// Poll the condition (a connection) at a short interval.
		select {
		case <-done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (a fast shutdown: sessions are ended), for
// a test of a database that went away; Restart brings it back.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stop(t)
}

// Restart starts the stopped server again on the same data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if running {
		t.Fatal("pgtest: Restart of a running server")
	}
	s.start(t)
}

// stop ends the server and checks that no process of it is left.
func (s *Server) stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	pgid := cmd.Process.Pid
	cmd.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-done:
	case <-time.After(stopTimeout):
		t.Errorf("pgtest: postgres still running %v after its shutdown began: killed; its log:\n%s", stopTimeout, s.logTail())
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	// The postmaster waits for its children before it exits; a killed
	// one leaves them to notice. Either way none may outlive the test.
	deadline := time.Now().Add(stopTimeout)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			t.Errorf("pgtest: processes of postgres's group %d left %v after it exited: killed", pgid, stopTimeout)
			return
		}
		time.Sleep(10 * time.Millisecond) // polling the condition: the group gone
	}
	if t.Failed() {
		t.Logf("pgtest: postgres's log:\n%s", s.logTail())
	}
}

// logTail is the end of the server's log, for a failure's message.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// DSN is the connection string of database on the server (trust
// authentication over the private socket: no password).
func (s *Server) DSN(database string) string {
	q := url.Values{"host": {s.sockDir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + url.PathEscape(database) + "?" + q.Encode()
}

// NewDatabase creates an empty database on the server and returns its
// connection string: each test of a suite gets its own.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connecting to create a database: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	return s.DSN(name)
}

// SocketDir is the directory of the server's socket.
func (s *Server) SocketDir() string { return s.sockDir }
