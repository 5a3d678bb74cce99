package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
)

// openRecordsDB opens a stopped node's SQLite records file for --db. A
// path that is not a file is refused: sqlstore would make a new, empty
// database there and every list would be empty.
func openRecordsDB(ctx context.Context, path string) (records.Store, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no such file (a node's records database is in its records directory, <agent>.records/ beside its agent file unless [records] dir says another)")
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("not a file")
	}
	return sqlstore.Open(ctx, "sqlite:"+path)
}
