package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/storetest"
	"github.com/brisvox/brisvox/internal/pgtest"
)

func TestOpenDSN(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, dsn string
		err       error  // nil: opens
		backend   string // when it opens
	}{
		{"empty", "", records.ErrInvalidConfig, ""},
		{"unknown scheme", "mysql://brisvox:hunter2@db/records", records.ErrInvalidConfig, ""},
		{"query in a path", "sqlite:" + filepath.Join(dir, "r.db?mode=memory"), records.ErrInvalidConfig, ""},
		{"bad postgres", "postgres://brisvox:hunter2@db:notaport/records", records.ErrInvalidConfig, ""},
		{"postgres unreachable", "postgres://brisvox:hunter2@/records?host=" + filepath.Join(dir, "nosocket"), records.ErrUnavailable, ""},
		{"plain path", filepath.Join(dir, "a", "records.db"), nil, BackendSQLite},
		{"sqlite:", "sqlite:" + filepath.Join(dir, "b.db"), nil, BackendSQLite},
		{"sqlite:///", "sqlite://" + filepath.Join(dir, "c.db"), nil, BackendSQLite},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(context.Background(), c.dsn)
			if !errors.Is(err, c.err) {
				t.Fatalf("Open(%q): %v, want %v", c.dsn, err, c.err)
			}
			if err != nil {
				// The message says what to do and never repeats a password.
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error repeats the password: %v", err)
				}
				return
			}
			defer s.Close()
			if s.Backend() != c.backend {
				t.Errorf("backend %q, want %q", s.Backend(), c.backend)
			}
		})
	}
}

// TestFileModes: the records file and SQLite's WAL and shared-memory
// files beside it are the owner's only, the directory made 0700.
// Catches the file left to SQLite's default mode (0644 under umask 022).
func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent.records")
	path := filepath.Join(dir, "records.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(context.Background(), storetest.FullRecord("call-1", storetest.T0)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(p), fi.Mode(), want)
		}
	}
}

// backends opens a fresh store of each backend (PostgreSQL skipped
// without its binaries, see pgtest).
func backends(t *testing.T) map[string]func(t *testing.T) string {
	srv := pgtest.Start(t)
	return map[string]func(t *testing.T) string{
		BackendSQLite:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "records.db") },
		BackendPostgres: func(t *testing.T) string { return srv.NewDatabase(t) },
	}
}

// TestMigrations: a fresh database gets every migration, recorded; a
// reopen applies none again and keeps the data; a database a newer
// binary migrated is refused, saying so. Catches the version check
// dropped (a newer schema written by an older binary) and migrations
// re-run at every open.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	for backend, newDSN := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			dsn := newDSN(t)
			s, err := Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, storetest.FullRecord("call-1", storetest.T0)); err != nil {
				t.Fatal(err)
			}
			applied := versions(t, s)
			if want := SchemaVersion(backend); len(applied) != want || applied[len(applied)-1] != want {
				t.Fatalf("applied %v, want 1..%d", applied, want)
			}
			s.Close()

			s, err = Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			if again := versions(t, s); len(again) != len(applied) {
				t.Fatalf("reopened: applied %v, was %v", again, applied)
			}
			if _, err := s.Get(ctx, "call-1"); err != nil {
				t.Fatalf("reopened: %v", err)
			}
			if _, err := s.w.ExecContext(ctx, s.q("INSERT INTO schema_migrations (version, name, applied) VALUES ($1, 'future', 0)"), 99); err != nil {
				t.Fatal(err)
			}
			s.Close()

			_, err = Open(ctx, dsn)
			if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 99") {
				t.Fatalf("Open of a newer schema: %v, want ErrSchemaTooNew naming version 99", err)
			}
		})
	}
}

func versions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.r.QueryContext(context.Background(), "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestMigrationSets: the backends' migrations are the same versions by
// the same names (a schema change is made for both).
func TestMigrationSets(t *testing.T) {
	l, err := migrations(BackendSQLite)
	if err != nil {
		t.Fatal(err)
	}
	p, err := migrations(BackendPostgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != len(p) {
		t.Fatalf("sqlite has %d migrations, postgres %d", len(l), len(p))
	}
	for i := range l {
		if l[i].version != p[i].version || l[i].name != p[i].name {
			t.Errorf("migration %d: sqlite %d_%s, postgres %d_%s", i, l[i].version, l[i].name, p[i].version, p[i].name)
		}
	}
}

// TestSQLiteLocked: a write lock another process holds past the busy
// timeout is records.ErrUnavailable (the writer keeps the record in its
// journal and retries), and the put succeeds once the lock is gone; the
// error names no content of the record. Catches SQLITE_BUSY taken for a
// permanent failure (the mutation: unavailable() false for it).
func TestSQLiteLocked(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // first in, last out: after the server's cleanup
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "records.db")
	s, err := Open(ctx, path, WithBusyTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	r := storetest.FullRecord("call-1", storetest.T0)
	_, err = s.Put(ctx, r)
	if !errors.Is(err, records.ErrUnavailable) {
		t.Fatalf("Put under another's lock: %v, want ErrUnavailable", err)
	}
	for _, secret := range []string{r.Caller.Number, r.Transcript[0].Text, string(r.Tools[0].Args)} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error holds the record's content %q: %v", secret, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if ins, err := s.Put(ctx, r); err != nil || !ins {
		t.Fatalf("Put after the lock went: %v, %v", ins, err)
	}
}

// TestPostgresDown: with the server stopped every call is
// records.ErrUnavailable; once it is back, puts succeed again on the
// same Store (its pool drops the dead connections). Catches a connection
// error taken for a permanent failure (the mutation: unavailable() false
// for *pgconn.ConnectError and closed connections).
func TestPostgresDown(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // first in, last out: after the server's cleanup
	srv := pgtest.Start(t)
	ctx := context.Background()
	s, err := Open(ctx, srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(ctx, storetest.FullRecord("call-0", storetest.T0)); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	if _, err := s.Put(ctx, storetest.FullRecord("call-1", storetest.T0)); !errors.Is(err, records.ErrUnavailable) {
		t.Fatalf("Put with the server down: %v, want ErrUnavailable", err)
	}
	if _, err := s.List(ctx, records.Query{}); !errors.Is(err, records.ErrUnavailable) {
		t.Fatalf("List with the server down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Get(ctx, "call-0"); !errors.Is(err, records.ErrUnavailable) {
		t.Fatalf("Get with the server down: %v, want ErrUnavailable", err)
	}
	srv.Restart(t)
	// Poll the condition: the pool may hand out a dead connection once.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ins, err := s.Put(ctx, storetest.FullRecord("call-1", storetest.T0))
		if err == nil {
			if !ins {
				t.Fatal("call-1 stored while the server was down")
			}
			break
		}
		if !errors.Is(err, records.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Put after the restart: %v", err)
		}
	}
	list, err := s.List(ctx, records.Query{})
	if err != nil || len(list) != 2 {
		t.Fatalf("after the restart: %d records, %v; want 2", len(list), err)
	}
}

// TestConcurrentOpen: nodes of a cluster starting at once against one
// new database all open it, and the schema is migrated once. Catches
// the migration's advisory lock left out (the nodes' CREATE TABLEs race:
// a duplicate key on pg_type, or a migration applied twice).
func TestConcurrentOpen(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // first in, last out: after the server's cleanup
	ctx := context.Background()
	for backend, newDSN := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			dsn := newDSN(t)
			const nodes = 4
			stores := make([]*Store, nodes)
			errs := make([]error, nodes)
			var wg sync.WaitGroup
			for i := range nodes {
				wg.Go(func() { stores[i], errs[i] = Open(ctx, dsn) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("node %d: %v", i, err)
				}
				defer stores[i].Close()
			}
			if v := versions(t, stores[0]); len(v) != SchemaVersion(backend) {
				t.Fatalf("applied %v, want each of 1..%d once", v, SchemaVersion(backend))
			}
		})
	}
}
