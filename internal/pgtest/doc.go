// Package pgtest (test support) starts a private PostgreSQL server for a
// test: Debian's initdb and postgres binaries, a data directory in the
// test's temporary directory, a Unix socket in a private directory and no
// TCP listener, fsync off. The server is shut down when the test ends and
// no process of it may be left. Tests skip when the binaries are missing,
// and fail under CI=true (CI's setup installs them).
package pgtest
