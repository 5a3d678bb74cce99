// Package redact replaces personal data in a call's text before it is
// stored or leaves the node: the transcript's lines, tool arguments and
// results (when the tool-data policy keeps them) and failure details go
// through a Redactor in records' Call.End and Service.Recover, so neither
// the journal, the store nor a webhook sees the original.
//
// The kinds are phone numbers, email addresses, card numbers (Luhn-valid
// only), IBANs (mod-97-valid only), dates of birth (dates near a birth
// word) and patterns the deployment configures; each match becomes
// "[kind]" and is counted by kind. The rules are written to keep ordinary
// numbers of a call (times, party sizes, prices, order and flight
// numbers, dates) readable: see the rule of each kind on its function.
package redact
