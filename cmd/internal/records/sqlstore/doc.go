// Package sqlstore keeps call records in SQL: SQLite, the embedded
// default (a file beside the agent, WAL mode, one writer connection), or
// PostgreSQL for clusters (several nodes writing one database). Both keep
// records.Store with the same schema, migrated at Open from the versioned
// files under migrations/ (one set per backend, recorded in the
// schema_migrations table), and pass the same suite (records/storetest).
//
// The store sits behind the node's records service: the service's writer
// goroutine puts each record after it is in the node's journal, so a
// database that cannot be reached (records.ErrUnavailable) costs a retry,
// never a record, and nothing here is on a call's path.
package sqlstore
