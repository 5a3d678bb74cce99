package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/rs/zerolog"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// The backends' names (Store.Backend).
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Defaults of the options.
const (
	DefaultBusyTimeout  = 5 * time.Second
	DefaultSQLiteReads  = 4
	DefaultPostgresPool = 8
	// defaultConnectTimeout bounds a PostgreSQL connection attempt when
	// the DSN sets none (connect_timeout), so an unreachable server is an
	// ErrUnavailable in seconds, not a hang.
	defaultConnectTimeout = 10 * time.Second
)

// Store is a records.Store over database/sql: modernc's pure-Go SQLite
// driver or pgx's PostgreSQL driver.
type Store struct {
	backend string
	// w takes every write. For SQLite it is one connection (SQLite has
	// one writer at a time; more connections only queue inside SQLite,
	// measured no faster) and r the readers' pool (WAL lets them read
	// while w writes). For PostgreSQL both are the one pool.
	w, r   *sql.DB
	q      func(string) string // the backend's placeholders
	log    zerolog.Logger
	closed atomic.Bool
}

var _ records.Store = (*Store)(nil)

// Option changes a default of Open. Options do no I/O.
type Option func(*options)

type options struct {
	log         zerolog.Logger
	busyTimeout time.Duration
	maxConns    int
}

// WithLog sets the logger (the migrations applied; nothing of a record).
func WithLog(l zerolog.Logger) Option { return func(o *options) { o.log = l } }

// WithBusyTimeout sets how long a SQLite statement waits for a lock held
// by another process (brisvox records on the same file) before the store
// reports records.ErrUnavailable; default DefaultBusyTimeout.
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithMaxConns sets the connections: SQLite's readers (the writer is
// always one), PostgreSQL's pool.
func WithMaxConns(n int) Option { return func(o *options) { o.maxConns = n } }

// Open opens the store dsn names and migrates its schema:
// "sqlite:/path/to/records.db" or a plain path (SQLite; the file and its
// directory are made, 0600 and 0700, if missing), or "postgres://..." /
// "postgresql://..." (PostgreSQL, a pgx connection string; the database
// must exist). A database newer than this binary's schema is
// ErrSchemaTooNew; a PostgreSQL server that cannot be reached is
// records.ErrUnavailable.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	o := options{log: zerolog.Nop(), busyTimeout: DefaultBusyTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.busyTimeout < 0 || o.maxConns < 0 {
		return nil, fmt.Errorf("%w: sqlstore: negative busy timeout or connections", records.ErrInvalidConfig)
	}
	var s *Store
	var err error
	switch {
	case dsn == "":
		return nil, fmt.Errorf("%w: sqlstore: no database given (a SQLite file path, sqlite:/path, or postgres://...)", records.ErrInvalidConfig)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err = openPostgres(dsn, o)
	case strings.Contains(dsn, "://") && !strings.HasPrefix(dsn, "sqlite:"):
		return nil, fmt.Errorf("%w: sqlstore: unknown database %q (a SQLite file path, sqlite:/path, or postgres://...)", records.ErrInvalidConfig, schemeOf(dsn))
	default:
		s, err = openSQLite(dsn, o)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.closeDBs()
		if errors.Is(err, records.ErrUnavailable) {
			return nil, fmt.Errorf("%w (is the database server up, and its address and credentials in the connection string right?)", err)
		}
		return nil, err
	}
	return s, nil
}

// schemeOf is a DSN's scheme, so an error never repeats its password.
func schemeOf(dsn string) string {
	scheme, _, _ := strings.Cut(dsn, "://")
	return scheme + "://..."
}

func openSQLite(dsn string, o options) (*Store, error) {
	path := strings.TrimPrefix(dsn, "sqlite:")
	if strings.HasPrefix(path, "//") {
		path = path[2:] // sqlite:///abs/path
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%w: sqlstore: SQLite path %q: give a file path without ? or #", records.ErrInvalidConfig, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: sqlstore: making the records directory: %v", records.ErrInvalidConfig, err)
	}
	// Made 0600 before SQLite sees it: its WAL and shared-memory files
	// take the database file's mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: sqlstore: opening the records file: %v", records.ErrInvalidConfig, err)
	}
	f.Close()
	pragmas := url.Values{}
	pragmas.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds()))
	pragmas.Add("_pragma", "journal_mode(WAL)")
	pragmas.Add("_pragma", "synchronous(NORMAL)")
	pragmas.Add("_pragma", "foreign_keys(1)")
	base := "file:" + path + "?"
	// The writer begins its transactions IMMEDIATE: it takes the write
	// lock at BEGIN, so a transaction never fails halfway upgrading a
	// read lock that another process's writer blocks.
	wq := url.Values{"_txlock": {"immediate"}}
	for _, p := range pragmas["_pragma"] {
		wq.Add("_pragma", p)
	}
	w, err := sql.Open("sqlite", base+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("%w: sqlstore: %v", records.ErrInvalidConfig, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	rq := url.Values{"_pragma": append(pragmas["_pragma"], "query_only(1)")}
	r, err := sql.Open("sqlite", base+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("%w: sqlstore: %v", records.ErrInvalidConfig, err)
	}
	n := o.maxConns
	if n == 0 {
		n = DefaultSQLiteReads
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return &Store{backend: BackendSQLite, w: w, r: r, q: sqlitePlaceholders, log: o.log}, nil
}

// sqlitePlaceholders turns the queries' $1 into SQLite's numbered ?1
// (SQLite reads $1 as a parameter named "$1").
func sqlitePlaceholders(q string) string { return strings.ReplaceAll(q, "$", "?") }

func openPostgres(dsn string, o options) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors redact the password.
		return nil, fmt.Errorf("%w: sqlstore: PostgreSQL connection string: %v", records.ErrInvalidConfig, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	db := stdlib.OpenDB(*cfg)
	n := o.maxConns
	if n == 0 {
		n = DefaultPostgresPool
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{backend: BackendPostgres, w: db, r: db, q: func(q string) string { return q }, log: o.log}, nil
}

// Backend is "sqlite" or "postgres".
func (s *Store) Backend() string { return s.backend }

// Close closes the database. Calls after it return records.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.closeDBs()
}

func (s *Store) closeDBs() error {
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}
