// Package archtest holds the repository's structural tests: every package
// documents itself in a doc.go file, and the packages respect the layering
// of the module (messages at the bottom, then agent, providers, media, the
// actors, and the commands on top).
//
// The checks are plain functions over package data taken from `go list`, so
// that each rule can be shown to bite on synthetic packages. The tests live
// in archtest_test.go and run with the rest of the suite.
package archtest
