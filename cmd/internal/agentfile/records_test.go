package agentfile

import (
	"strings"
	"testing"
)

const recordsBase = "prompt = \"p\"\n[transports.webrtc]\nenabled = true\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n"

// TestRecordsDefaults: no [records] keeps records with the privacy
// defaults (numbers hashed, transcripts kept, tool data dropped, no
// audio, every redaction kind). Mutation caught: a default flipped
// (tool_data keep, recording on) or records off by default.
func TestRecordsDefaults(t *testing.T) {
	f, ds := Parse("a.toml", []byte(recordsBase), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	r := f.Records
	if !r.Enabled.V || r.Numbers.V != "hash" || r.Transcripts.V != "keep" || r.ToolData.V != "drop" || r.Recording.V != "off" ||
		r.NumberKeyEnv.V != "BRISVOX_RECORDS_KEY" || r.Redact != nil || r.DatabaseEnv.V != "" || f.Tracing.Endpoint.V != "" {
		t.Fatalf("defaults: %+v %+v", r, f.Tracing)
	}
}

// TestRecordsSettings reads every field, and refuses what is wrong with
// a diagnostic at the field. Mutation caught: a check dropped (a
// webhook with credentials in its URL accepted, a bad pattern compiled
// at serve time instead of refused here, the webhook secret's variable
// not required, a bucket endpoint with a scheme or a bucket without
// recording accepted, the bucket's credentials not required).
func TestRecordsSettings(t *testing.T) {
	bucketSrc := func(fields string) string { return "recording = \"wav\"\n[records.bucket]\n" + fields }
	good := recordsBase + `[records]
dir = "/var/lib/brisvox/a"
database_env = "PG_URL"
numbers = "keep"
number_key_env = "MY_KEY"
transcripts = "drop"
tool_data = "keep"
recording = "wav"
redact = ["phone", "card"]
keep_days = 365
transcript_days = 30
recording_days = 7
tool_data_days = 1
number_days = 90
webhooks = ["https://example.com/hook"]
webhook_secret_env = "HOOK_SECRET"
[records.bucket]
endpoint = "127.0.0.1:9000"
secure = false
name = "calls"
prefix = "node-a/"
region = "eu-west-1"
access_key_env = "REC_ACCESS"
secret_key_env = "REC_SECRET"
[records.patterns]
member_id = '\bMEM-\d{6}\b'
[tracing]
endpoint = "http://127.0.0.1:4318"
headers_env = "OTLP_HEADERS"
`
	f, ds := Parse("a.toml", []byte(good), TOML, Options{LookupEnv: envWith("PG_URL", "HOOK_SECRET", "OTLP_HEADERS", "REC_ACCESS", "REC_SECRET")})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	r := f.Records
	if r.Dir.V != "/var/lib/brisvox/a" || r.DatabaseEnv.V != "PG_URL" || r.Numbers.V != "keep" || r.NumberKeyEnv.V != "MY_KEY" ||
		r.Transcripts.V != "drop" || r.ToolData.V != "keep" || r.Recording.V != "wav" || len(r.Redact) != 2 ||
		r.KeepDays.V != 365 || r.TranscriptDays.V != 30 || r.RecordingDays.V != 7 || r.ToolDataDays.V != 1 || r.NumberDays.V != 90 ||
		len(r.Webhooks) != 1 || r.WebhookSecretEnv.V != "HOOK_SECRET" || len(r.Patterns) != 1 || r.Patterns[0].Name != "member_id" ||
		f.Tracing.Endpoint.V != "http://127.0.0.1:4318" || f.Tracing.HeadersEnv.V != "OTLP_HEADERS" {
		t.Fatalf("%+v %+v", r, f.Tracing)
	}
	if b := r.Bucket; b == nil || b.Endpoint.V != "127.0.0.1:9000" || b.Secure.V || b.Name.V != "calls" || b.Prefix.V != "node-a/" ||
		b.Region.V != "eu-west-1" || b.AccessKeyEnv.V != "REC_ACCESS" || b.SecretKeyEnv.V != "REC_SECRET" {
		t.Fatalf("bucket: %+v", r.Bucket)
	}
	for _, c := range []struct{ name, src, path, want string }{
		{"numbers", "numbers = \"encrypt\"", "records.numbers", "not one of"},
		{"redact kind", "redact = [\"ssn\"]", "records.redact[0]", "not a kind"},
		{"days", "keep_days = -1", "records.keep_days", "out of range"},
		{"webhook creds", "webhooks = [\"https://u:p@example.com/h\"]", "records.webhooks[0]", "without credentials"},
		{"webhook scheme", "webhooks = [\"ftp://example.com/h\"]", "records.webhooks[0]", "not an http(s) URL"},
		{"webhook secret", "webhooks = [\"https://example.com/h\"]", "records.webhook_secret_env", "BRISVOX_WEBHOOK_SECRET is not set"},
		{"database env unset", "database_env = \"NOPE_URL\"", "records.database_env", "NOPE_URL is not set"},
		{"database url inline", "database_env = \"postgres://u:pw@h/db\"", "records.database_env", "not the name of an environment variable"},
		{"pattern", "[records.patterns]\nbad = '(unclosed'", "records.patterns.bad", "not a regular expression"},
		{"pattern name", "[records.patterns]\nBad-Name = 'x'", "records.patterns.Bad-Name", "not a pattern name"},
		{"unknown", "retention = 3", "records.retention", "unknown key"},
		{"bucket endpoint", bucketSrc("endpoint = \"https://s3.example.com\"\nname = \"b\""), "records.bucket.endpoint", "not a host[:port]"},
		{"bucket no endpoint", bucketSrc("name = \"b\""), "records.bucket.endpoint", "is missing"},
		{"bucket no name", bucketSrc("endpoint = \"s3.example.com\""), "records.bucket.name", "is missing"},
		{"bucket prefix", bucketSrc("endpoint = \"s3.example.com\"\nname = \"b\"\nprefix = \"/a\""), "records.bucket.prefix", "must end in '/'"},
		{"bucket secret unset", bucketSrc("endpoint = \"s3.example.com\"\nname = \"b\""), "records.bucket.secret_key_env", "BRISVOX_RECORDINGS_SECRET_KEY is not set"},
		{"bucket secret inline", bucketSrc("endpoint = \"s3.example.com\"\nname = \"b\"\nsecret_key_env = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\""), "records.bucket.secret_key_env", "looks like a secret"},
		{"bucket without recording", "[records.bucket]\nendpoint = \"s3.example.com\"\nname = \"b\"", "records.bucket", "recording is off"},
		{"bucket unknown", bucketSrc("endpoint = \"s3.example.com\"\nname = \"b\"\nacl = \"public\""), "records.bucket.acl", "unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Parse("a.toml", []byte(recordsBase+"[records]\n"+c.src+"\n"), TOML, Options{LookupEnv: envWith()})
			found := false
			for _, d := range ds {
				if d.Path == c.path && strings.Contains(d.Msg, c.want) {
					found = true
				}
				if strings.Contains(d.Msg, "pw@") || strings.Contains(d.Hint, "pw@") || strings.Contains(d.Msg+d.Hint, "EXAMPLEKEY") {
					t.Errorf("a diagnostic shows the secret: %v", d)
				}
			}
			if !found {
				t.Fatalf("no diagnostic at %s with %q: %v", c.path, c.want, ds)
			}
		})
	}
	_, ds = Parse("a.toml", []byte(recordsBase+"[tracing]\nendpoint = \"grpc://x\"\n"), TOML, Options{LookupEnv: envWith()})
	if len(ds) != 1 || ds[0].Path != "tracing.endpoint" {
		t.Fatalf("tracing endpoint: %v", ds)
	}
}
