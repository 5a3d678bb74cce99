package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/storetest"
	"github.com/brisvox/brisvox/internal/pgtest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) records.Store {
		s, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "records.db"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Backend() != BackendSQLite {
			t.Fatalf("backend %q", s.Backend())
		}
		return s
	})
}

func TestPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) records.Store {
		s, err := Open(context.Background(), srv.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		if s.Backend() != BackendPostgres {
			t.Fatalf("backend %q", s.Backend())
		}
		return s
	})
}
