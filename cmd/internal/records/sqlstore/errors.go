package sqlstore

import "errors"

var (
	// ErrSchemaTooNew: the database was migrated by a newer brisvox than
	// this one; it would not know the newer columns' meaning, so it does
	// not write there.
	ErrSchemaTooNew = errors.New("sqlstore: database schema newer than this binary")
	// ErrInvalidRecord: a record the store cannot keep (no call id, no
	// start).
	ErrInvalidRecord = errors.New("sqlstore: invalid record")
)
