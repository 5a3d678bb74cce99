// Package logtest (test support) checks log output the way a strict JSON log pipeline
// reads it: every line one JSON object, no key twice in one object.
// encoding/json keeps the last of duplicate keys silently, so tests that
// guard the engine's log lines use this instead.
package logtest
