package pgtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// TestStartStop starts a server, queries it, stops and restarts it with
// its data kept, and checks after its cleanup that no process of it is
// left and its socket directory is gone.
func TestStartStop(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // first in, last out: after the server's cleanup
	var pgid int
	var sockDir string
	t.Run("server", func(t *testing.T) {
		s := Start(t)
		sockDir = s.SocketDir()
		s.mu.Lock()
		pgid = s.cmd.Process.Pid
		s.mu.Unlock()
		ctx := context.Background()
		dsn := s.NewDatabase(t)
		run(t, dsn, "CREATE TABLE kept (n INTEGER); INSERT INTO kept VALUES (42)")
		if os.Geteuid() == 0 {
			// The server runs as another user than root.
			st, err := os.Stat("/proc/" + strconv.Itoa(pgid))
			if err != nil {
				t.Fatal(err)
			}
			if st.Sys().(*syscall.Stat_t).Uid == 0 {
				t.Error("postgres runs as root")
			}
		}
		s.Stop(t)
		if _, err := pgx.Connect(ctx, dsn); err == nil {
			t.Fatal("connected to a stopped server")
		}
		s.Restart(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT n FROM kept").Scan(&n); err != nil || n != 42 {
			t.Fatalf("after a restart: %d, %v", n, err)
		}
		s.mu.Lock()
		pgid = s.cmd.Process.Pid
		s.mu.Unlock()
	})
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Errorf("processes of the server's group %d left after its test", pgid)
	}
	if _, err := os.Stat(sockDir); !os.IsNotExist(err) {
		t.Errorf("socket directory %s left: %v", sockDir, err)
	}
}

// TestNoTCP: the server listens on no TCP port (listen_addresses empty).
func TestNoTCP(t *testing.T) {
	s := Start(t)
	var addrs string
	conn, err := pgx.Connect(context.Background(), s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), "SHOW listen_addresses").Scan(&addrs); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(addrs) != "" {
		t.Errorf("listen_addresses %q, want none", addrs)
	}
}

func run(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}
