package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The migrations: migrations/<backend>/NNNN_name.sql, numbered from 1
// without gaps. A released file is never edited: a change to the schema
// is a new file (both backends' directories, the same number).
//
//go:embed migrations
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads backend's migrations in order.
func migrations(backend string) ([]migration, error) {
	dir := path.Join("migrations", backend)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("sqlstore: migration file %s: want NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlstore: %s migrations: version %d where %d was due", backend, m.version, i+1)
		}
	}
	return out, nil
}

// migrationLock is the PostgreSQL advisory lock the nodes of a cluster
// take while one of them migrates (any constant of our own).
const migrationLock = 0x6272_7672_6563 // "brvrec"

// migrate brings the schema to the newest version this binary knows, in
// one transaction: every migration applies, or none.
func (s *Store) migrate(ctx context.Context) error {
	all, err := migrations(s.backend)
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.failed("migrating", err)
	}
	defer tx.Rollback()
	if s.backend == BackendPostgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return s.failed("migrating", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL PRIMARY KEY,
    name    TEXT    NOT NULL,
    applied BIGINT  NOT NULL
)`); err != nil {
		return s.failed("migrating", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return s.failed("migrating", err)
	}
	if current > len(all) {
		return fmt.Errorf("%w: the database's records schema is version %d, this brisvox knows up to %d: run the brisvox that migrated it (or a newer one), or point this one at another database",
			ErrSchemaTooNew, current, len(all))
	}
	for _, m := range all[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return s.failed(fmt.Sprintf("migration %d (%s)", m.version, m.name), err)
		}
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)"),
			m.version, m.name, time.Now().UnixNano()); err != nil {
			return s.failed("migrating", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.failed("migrating", err)
	}
	for _, m := range all[current:] {
		s.log.Info().Str("backend", s.backend).Int("version", m.version).Str("migration", m.name).Msg("records schema migrated")
	}
	return nil
}

// SchemaVersion is the newest schema version this binary knows for
// backend ("sqlite" or "postgres").
func SchemaVersion(backend string) int {
	all, _ := migrations(backend)
	return len(all)
}
