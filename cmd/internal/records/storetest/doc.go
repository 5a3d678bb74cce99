// Package storetest (test support) is the suite every records.Store
// backend passes (sqlstore's SQLite and PostgreSQL): the round trip of a
// record with every field, idempotent puts, the list's filters, order and
// paging, erasure with its audit, the sweeper's per-field retention, and
// concurrent puts. Its fixtures (FullRecord) serve other tests too.
package storetest
