// Package s3test (test support) starts a local S3-compatible server for a
// test: s3rver (scripts/s3, installed by scripts/setup.sh into
// .native/s3) on Debian's nodejs, listening on 127.0.0.1 on a free port,
// its data in the test's temporary directory, one bucket made at start.
// The server is killed when the test ends. Tests skip with -short (it is
// a loopback server in real time) and when s3rver is not installed, and
// fail under CI=true when it is missing (CI's setup installs it).
package s3test
