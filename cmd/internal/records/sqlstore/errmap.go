package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// failed wraps a database error for the caller: records.ErrUnavailable
// when waiting and trying again can help (the server down or
// unreachable, a lock held past the busy timeout, a full disk), so the
// records writer keeps the record in its journal and retries;
// records.ErrClosed after Close; the context's own error as it is.
func (s *Store) failed(op string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case s.closed.Load():
		return fmt.Errorf("%w: sqlstore: %s", records.ErrClosed, op)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("sqlstore: %s: %w", op, err)
	case unavailable(err):
		return fmt.Errorf("%w: sqlstore %s: %s: %v", records.ErrUnavailable, s.backend, op, err)
	}
	return fmt.Errorf("sqlstore %s: %s: %w", s.backend, op, err)
}

// unavailable reports whether err says the database cannot be reached or
// cannot take the statement now (rather than that the statement is wrong).
func unavailable(err error) bool {
	var le *sqlite.Error
	if errors.As(err, &le) {
		switch le.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
			return true
		}
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			strings.HasPrefix(pe.Code, "53"),                           // insufficient resources
			strings.HasPrefix(pe.Code, "58"),                           // system error (I/O)
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutting down, starting up
			pe.Code == "40001", pe.Code == "40P01": // serialization failure, deadlock: try again
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err)
}
