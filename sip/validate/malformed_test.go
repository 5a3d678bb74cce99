package validate

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sip/testdata/malformed from malformedCorpus")

const malformedDir = "../testdata/malformed"

// malformedFile is one file of our own malformed corpus: how it is made
// and what becomes of it over UDP and TCP (see row).
type malformedFile struct {
	name string
	data func() []byte
	row  row
}

func text(m message) func() []byte { return func() []byte { return []byte(m.text()) } }

// manyVias is an INVITE with n Via headers above its own, one a line.
func manyVias(n int) func() []byte {
	return func() []byte {
		m := invite()
		for i := 0; i < n; i++ {
			m.headers = append(m.headers, "v: SIP/2.0/UDP 192.0.2.1")
		}
		return []byte(m.text())
	}
}

// foldedVias is an INVITE with n Via values in one comma-separated
// header: sipgo counts each as a header, and it fits in 64 KiB.
func foldedVias(n int) func() []byte {
	return func() []byte {
		// sipgo splits Via values at a comma only after a parameter.
		vias := strings.Repeat("SIP/2.0/UDP a;b,", n-1) + "SIP/2.0/UDP a;b"
		return []byte(invite().with("v: " + vias).text())
	}
}

// garbage is n bytes from a seeded generator, after prefix.
func garbage(seed uint64, prefix string, n int) func() []byte {
	return func() []byte {
		r := rand.New(rand.NewPCG(seed, seed))
		b := []byte(prefix)
		for i := 0; i < n; i++ {
			b = append(b, byte(r.Uint32()))
		}
		return b
	}
}

var (
	tooMuch     = outcome{parserRejects: true, why: "above sipgo's 65535-byte message bound"}
	sizedBody   = func(n int) message { return invite().withBody(strings.Repeat("a=x\r\n", n/5)) }
	lyingLength = func() []byte {
		return []byte(strings.Replace(invite().text(), fmt.Sprintf("Content-Length: %d", len(typicalSDP)),
			fmt.Sprintf("Content-Length: %d", len(typicalSDP)+100), 1))
	}
)

// malformedCorpus is sip/testdata/malformed: go test -run
// TestMalformedCorpus -update ./sip/validate rewrites the files.
var malformedCorpus = []malformedFile{
	{"missing-via", text(invite().without("Via")), row{udp: outcome{code: 0, cause: CauseMissingVia}}},
	{"missing-from", text(invite().without("From")), row{udp: outcome{code: 400, cause: CauseMissingFrom}}},
	{"missing-to", text(invite().without("To")), row{udp: outcome{code: 400, cause: CauseMissingTo}}},
	{"missing-call-id", text(invite().without("Call-ID")), row{udp: outcome{code: 0, cause: CauseMissingCallID}}},
	{"missing-cseq", text(invite().without("CSeq")), row{udp: outcome{code: 0, cause: CauseMissingCSeq}}},
	{"missing-max-forwards", text(invite().without("Max-Forwards")), row{udp: outcome{code: 400, cause: CauseMissingMaxFwd}}},
	{"missing-content-length", text(message{start: "OPTIONS sip:a@b.example SIP/2.0", headers: as("OPTIONS").headers, noCLen: true}),
		row{udp: outcome{code: pass}, tcp: []outcome{{parserRejects: true, why: "sipgo's stream parser needs Content-Length"}}}},
	{"injection-lf", text(invite().with("Subject: hi\nX-Injected: yes")), row{udp: outcome{code: 400, cause: CauseBadHeader}}},
	{"injection-lf-from-tag", text(invite().set("From", "From: <sip:a@b.example>;tag=1\nX-Injected: yes")), row{udp: outcome{code: 400, cause: CauseBadHeader}}},
	{"injection-cr", text(invite().with("Subject: hi\rX-Injected: yes")), row{udp: outcome{parserRejects: true, why: "a CR not followed by LF"}}},
	{"injection-nul", text(invite().with("Subject: a\x00b")), row{udp: outcome{code: 400, cause: CauseBadHeader}}},
	{"vias-10000", manyVias(10000), row{udp: tooMuch}},
	{"vias-3000-folded", foldedVias(3000), row{udp: outcome{code: 0, cause: CauseTooManyHeaders}}},
	{"size-70k", text(sizedBody(70 << 10)), row{udp: tooMuch}},
	{"body-20k", text(sizedBody(20 << 10)), row{udp: outcome{code: 413, cause: CauseBodyTooLarge}}},
	{"content-length-larger", lyingLength, row{udp: outcome{parserRejects: true}, tcp: []outcome{{partial: true}}}},
	{"options-body", text(as("OPTIONS").with("Content-Type: text/plain").withBody("hello")), row{udp: outcome{code: 415, cause: CauseBodyType}}},
	{"max-forwards-zero", text(invite().set("Max-Forwards", "Max-Forwards: 0")), row{udp: outcome{code: 483, cause: CauseTooManyHops}}},
	{"require-100rel", text(invite().with("Require: 100rel")), row{udp: outcome{code: 420, cause: CauseUnsupported}}},
	{"version-1", text(invite().withStart(strings.Replace(inviteLine, "2.0", "1.0", 1))), row{udp: outcome{code: 505, cause: CauseVersion}}},
	{"garbage-binary", garbage(1, "", 1400), row{udp: outcome{parserRejects: true}}},
	{"garbage-after-invite", garbage(2, "INVITE sip:a@b.example SIP/2.0\r\n", 1200), row{udp: outcome{parserRejects: true}}},
}

func TestMalformedCorpus(t *testing.T) {
	if *update {
		if err := os.MkdirAll(malformedDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range malformedCorpus {
			if err := os.WriteFile(filepath.Join(malformedDir, f.name+".dat"), f.data(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := corpusNames(t, filepath.Dir(malformedDir), filepath.Base(malformedDir))
	if len(files) != len(malformedCorpus) {
		t.Errorf("%d files in %s, %d in the table", len(files), malformedDir, len(malformedCorpus))
	}
	for _, f := range malformedCorpus {
		t.Run(f.name, func(t *testing.T) {
			data := readFile(t, filepath.Join(malformedDir, f.name+".dat"))
			if !bytes.Equal(data, f.data()) {
				t.Fatalf("the file differs from its generator: go test -run TestMalformedCorpus -update")
			}
			checkDatagram(t, data, Options{}, f.row.udp)
			tcp := f.row.tcp
			if tcp == nil {
				tcp = []outcome{f.row.udp}
			}
			checkStream(t, data, Options{Stream: true}, tcp)
		})
	}
}
