package s3test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The test bucket and its credentials: s3rver knows the access key id
// S3RVER and checks it, but computes no V4 signature, so the secret is
// one a test may look for in a log.
const (
	Bucket    = "recordings"
	AccessKey = "S3RVER"
	SecretKey = "secret-never-logged-7f3a"
	Region    = "us-east-1"
)

// Server is a running s3rver.
type Server struct {
	t    testing.TB
	js   string
	dir  string
	port string
	cmd  *exec.Cmd
	done chan struct{} // the stdout reader ended
}

// script finds s3rver's entry point under the module's .native/s3, or
// skips (fails under CI=true: setup installs it); -short skips.
func script(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("a local S3 server on a loopback socket, in real time (-short skips it)")
	}
	_, file, _, _ := runtime.Caller(0)
	js := filepath.Join(filepath.Dir(file), "..", "..", ".native", "s3", "node_modules", "s3rver", "bin", "s3rver.js")
	_, err := os.Stat(js)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("s3rver is not installed (%v): scripts/setup.sh all installs it into .native/s3", err)
		}
		t.Skipf("s3rver is not installed (%v): run scripts/setup.sh all (it installs it into .native/s3)", err)
	}
	return js
}

// Start starts s3rver with the test bucket; Cleanup kills it.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, js: script(t), dir: t.TempDir(), port: "0"}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

var listening = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`)

// Restart starts the server again after Stop, on the same port with the
// same data (the first start takes a free port).
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("s3test: Restart of a running server")
	}
	cmd := exec.Command("node", s.js, "--directory", s.dir, "--address", "127.0.0.1", "--port", s.port,
		"--configure-bucket", Bucket, "--no-vhost-buckets")
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = io.Discard // a killed client's ECONNRESET traces
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case p, ok := <-found:
		if !ok {
			s.Stop()
			s.t.Fatal("s3test: s3rver exited before listening")
		}
		s.port = p
	case <-time.After(30 * time.Second):
		s.Stop()
		s.t.Fatal("s3test: s3rver did not listen within 30 s")
	}
}

// Stop kills the server and waits for it and its output's reader (its
// data stays for Restart).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd.Wait()
	s.cmd = nil
}

// Endpoint is the server's host:port.
func (s *Server) Endpoint() string { return "127.0.0.1:" + s.port }

// Client is the test's own view of the server; close (or Cleanup)
// closes its idle connections.
func (s *Server) Client() (c *minio.Client, close func()) {
	s.t.Helper()
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		s.t.Fatal(err)
	}
	c, err = minio.New(s.Endpoint(), &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Transport: tr, Region: Region})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(tr.CloseIdleConnections)
	return c, tr.CloseIdleConnections
}

// Object reads an object of the test bucket whole (no connection left
// open).
func (s *Server) Object(key string) ([]byte, error) {
	c, done := s.Client()
	defer done()
	o, err := c.GetObject(context.Background(), Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(o)
}
