package agentfile

import (
	"fmt"
	neturl "net/url"
	"regexp"
	"strings"
)

// Records is [records]: what is kept of each call (docs/RECORDS.md).
type Records struct {
	Pos Pos
	// Enabled keeps a record of every call (default true).
	Enabled Value[bool]
	// Dir is the records directory of the embedded store: the SQLite
	// database, the journals, the recordings, the webhook queue. Default
	// (empty): "<agent file without its extension>.records" beside the
	// agent file. A relative path is relative to the agent file.
	Dir Value[string]
	// DatabaseEnv names the variable holding a PostgreSQL URL (it holds
	// a password: never in the file); empty: the embedded SQLite file.
	DatabaseEnv Value[string]
	// Numbers: keep, hash (default) or drop the parties' numbers;
	// NumberKeyEnv names the variable holding the hash key (default
	// BRISVOX_RECORDS_KEY; unset: a key made once in Dir).
	Numbers      Value[string]
	NumberKeyEnv Value[string]
	// Transcripts: keep (default) or drop. ToolData: drop (default) or
	// keep the tools' arguments and results (redacted).
	Transcripts Value[string]
	ToolData    Value[string]
	// Recording: off (default), wav or ogg (Opus): both channels of
	// every call.
	Recording Value[string]
	// Redact lists the PII kinds redacted (default all: phone, email,
	// card, iban, dob); Patterns adds named regular expressions.
	Redact   []Value[string]
	Patterns []Pattern
	// Days each part is kept, from the call's end (0: for ever).
	KeepDays, TranscriptDays, RecordingDays, ToolDataDays, NumberDays Value[int]
	// Webhooks are the end-of-call URLs; WebhookSecretEnv names the
	// variable holding their signing secret (default
	// BRISVOX_WEBHOOK_SECRET, required when there are webhooks).
	Webhooks         []Value[string]
	WebhookSecretEnv Value[string]
	// Bucket, when [records.bucket] is present, puts the recordings in an
	// S3-compatible bucket (the records directory is their spool).
	Bucket *Bucket
}

// Bucket is [records.bucket]: the S3-compatible bucket of the recordings.
type Bucket struct {
	Pos Pos
	// Endpoint is the server's host[:port], without a scheme; Secure
	// (default true) is HTTPS.
	Endpoint Value[string]
	Secure   Value[bool]
	// Name must exist; Prefix (empty or ending in '/') goes before every
	// key; Region empty asks the server.
	Name, Prefix, Region Value[string]
	// AccessKeyEnv and SecretKeyEnv name the variables holding the
	// credentials (default BRISVOX_RECORDINGS_ACCESS_KEY and
	// BRISVOX_RECORDINGS_SECRET_KEY).
	AccessKeyEnv, SecretKeyEnv Value[string]
}

// Pattern is a configured redaction pattern: its name (the replacement
// says "[name]") and its regular expression.
type Pattern struct {
	Name   string
	Regexp Value[string]
}

// RedactKinds are the PII kinds [records] redact may list.
var RedactKinds = []string{"phone", "email", "card", "iban", "dob"}

// Tracing is [tracing]: OpenTelemetry traces over OTLP/HTTP, off unless
// an endpoint is given.
type Tracing struct {
	Pos Pos
	// Endpoint is the collector's OTLP/HTTP base URL
	// (http://127.0.0.1:4318); HeadersEnv names a variable holding
	// extra headers ("key=value,key2=value2": an API key).
	Endpoint   Value[string]
	HeadersEnv Value[string]
}

const maxRetentionDays = 36500

// records reads [records].
func (w *walker) records(t *tbl) Records {
	r := Records{Pos: t.pos}
	r.Enabled = t.boolean("enabled", true)
	r.Dir = t.str("dir", "")
	r.DatabaseEnv = w.envVar(t, "database_env", "BRISVOX_RECORDS_DATABASE", r.Enabled.V)
	r.Numbers = t.oneOf("numbers", "hash", "keep", "hash", "drop")
	r.NumberKeyEnv = w.envVar(t, "number_key_env", "BRISVOX_RECORDS_KEY", false)
	if !r.NumberKeyEnv.Set || r.NumberKeyEnv.V == "" {
		r.NumberKeyEnv.V = "BRISVOX_RECORDS_KEY"
	}
	r.Transcripts = t.oneOf("transcripts", "keep", "keep", "drop")
	r.ToolData = t.oneOf("tool_data", "drop", "drop", "keep")
	r.Recording = t.oneOf("recording", "off", "off", "wav", "ogg")
	r.Redact = t.list("redact", func(s string) (string, string) {
		if !contains(RedactKinds, s) {
			return showValue(s) + " is not a kind of personal data the redactor knows", "one of " + listOf(RedactKinds) + "; add your own under [records.patterns]"
		}
		return "", ""
	})
	r.KeepDays = t.integer("keep_days", 0, 0, maxRetentionDays)
	r.TranscriptDays = t.integer("transcript_days", 0, 0, maxRetentionDays)
	r.RecordingDays = t.integer("recording_days", 0, 0, maxRetentionDays)
	r.ToolDataDays = t.integer("tool_data_days", 0, 0, maxRetentionDays)
	r.NumberDays = t.integer("number_days", 0, 0, maxRetentionDays)
	r.Webhooks = t.list("webhooks", func(s string) (string, string) {
		u, err := neturl.Parse(s)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return showValue(s) + " is not an http(s) URL without credentials", "e.g. " + w.format.Setting("webhooks", []string{"https://example.com/brisvox/calls"})
		}
		return "", ""
	})
	r.WebhookSecretEnv = w.envVar(t, "webhook_secret_env", "BRISVOX_WEBHOOK_SECRET", r.Enabled.V && len(r.Webhooks) > 0)
	if !r.WebhookSecretEnv.Set || r.WebhookSecretEnv.V == "" {
		r.WebhookSecretEnv.V = "BRISVOX_WEBHOOK_SECRET"
		if r.Enabled.V && len(r.Webhooks) > 0 {
			w.envSet(r.WebhookSecretEnv, join(t.path, "webhook_secret_env"), " (the webhooks' signing secret)", "export BRISVOX_WEBHOOK_SECRET=... (32 random bytes or more)")
		}
	}
	if b := t.sub("bucket"); b.present() {
		r.Bucket = w.bucket(b, r)
	}
	if p := t.sub("patterns"); p.present() {
		for _, e := range p.n.entries {
			v := Value[string]{Pos: e.val.pos}
			path := join(p.path, e.key)
			if e.val.kind != kString {
				w.at(e.val.pos, path, "want a regular expression as a string", "e.g. "+w.format.Setting(e.key, `\bMEMBER-\d{6}\b`))
				continue
			}
			if _, err := regexp.Compile(e.val.str); err != nil {
				w.at(e.val.pos, path, "is not a regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "), "RE2 syntax (Go's regexp)")
				continue
			}
			if !validPatternName(e.key) {
				w.at(e.keyPos, path, showValue(e.key)+" is not a pattern name", "lower-case letters, digits and '_'")
				continue
			}
			v.V, v.Set = e.val.str, true
			r.Patterns = append(r.Patterns, Pattern{Name: e.key, Regexp: v})
		}
	}
	t.done("key", "", nil)
	return r
}

func validPatternName(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// bucket reads [records.bucket].
func (w *walker) bucket(t *tbl, r Records) *Bucket {
	b := &Bucket{Pos: t.pos}
	b.Endpoint = t.str("endpoint", "")
	switch e := b.Endpoint; {
	case !e.Set || e.V == "":
		w.at(t.pos, join(t.path, "endpoint"), "is missing: the bucket's server", "its host[:port], e.g. "+w.format.Setting("endpoint", "s3.eu-west-1.amazonaws.com"))
	case strings.Contains(e.V, "://") || strings.Contains(e.V, "/"):
		w.at(e.Pos, join(t.path, "endpoint"), showValue(e.V)+" is not a host[:port]", "without a scheme or path (secure = false for plain HTTP), e.g. "+w.format.Setting("endpoint", "127.0.0.1:9000"))
	}
	b.Secure = t.boolean("secure", true)
	b.Name = t.str("name", "")
	if !b.Name.Set || b.Name.V == "" {
		w.at(t.pos, join(t.path, "name"), "is missing: the bucket's name (it must exist)", "e.g. "+w.format.Setting("name", "call-recordings"))
	}
	b.Prefix = t.str("prefix", "")
	if p := b.Prefix; p.V != "" && (!strings.HasSuffix(p.V, "/") || strings.HasPrefix(p.V, "/")) {
		w.at(p.Pos, join(t.path, "prefix"), showValue(p.V)+" must end in '/' and not start with one", "e.g. "+w.format.Setting("prefix", "node-a/"))
	}
	b.Region = t.str("region", "")
	check := r.Enabled.V && r.Recording.V != "off"
	for _, k := range []struct {
		v   *Value[string]
		key string
		def string
	}{{&b.AccessKeyEnv, "access_key_env", "BRISVOX_RECORDINGS_ACCESS_KEY"}, {&b.SecretKeyEnv, "secret_key_env", "BRISVOX_RECORDINGS_SECRET_KEY"}} {
		*k.v = w.envVar(t, k.key, k.def, check)
		if !k.v.Set || k.v.V == "" {
			k.v.V = k.def
			if check {
				w.envSet(*k.v, join(t.path, k.key), " (the recordings bucket's credentials)", "export "+k.def+"=...")
			}
		}
	}
	if r.Recording.V == "off" {
		w.at(t.pos, t.path, "holds the recordings, but recording is off", "set "+w.format.Setting("recording", "wav")+" in [records], or remove [records.bucket]")
	}
	t.done("key", "", nil)
	return b
}

// tracing reads [tracing].
func (w *walker) tracing(t *tbl) Tracing {
	tr := Tracing{Pos: t.pos}
	tr.Endpoint = t.str("endpoint", "")
	if e := tr.Endpoint; e.Set {
		u, err := neturl.Parse(e.V)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			w.at(e.Pos, join(t.path, "endpoint"), fmt.Sprintf("%s is not an OTLP/HTTP base URL", showValue(e.V)), "e.g. "+w.format.Setting("endpoint", "http://127.0.0.1:4318"))
			tr.Endpoint.V, tr.Endpoint.Set = "", false
		}
	}
	tr.HeadersEnv = w.envVar(t, "headers_env", "BRISVOX_OTLP_HEADERS", tr.Endpoint.V != "")
	t.done("key", "", nil)
	return tr
}
