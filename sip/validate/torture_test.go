package validate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// outcome is what becomes of one message file: the parser rejects it
// (sipgo's transport drops it, counted, before any handler), it is a
// response (not Check's business), Check lets it through (code -1), or
// Check refuses it with code (0: dropped).
type outcome struct {
	parserRejects bool
	response      bool
	code          int    // -1: passes Check
	cause         string // the Refusal's Cause when refused
	why           string
}

const pass = -1

// tortureTable: every file of sip/testdata/torture (RFC 4475's messages
// as sipgo ships them), valid or invalid, and what becomes of it over
// UDP (sipgo's datagram parser, Options{Stream: false}).
var tortureTable = map[string]outcome{
	// valid (RFC 4475 §3.1.1; mpart01 is RFC 5621's example)
	"valid/dblreq":     {code: pass, why: "the REGISTER; the INVITE after Content-Length 0 is junk on UDP"},
	"valid/esc01":      {code: pass},
	"valid/esc02":      {code: pass, why: "the handler answers the unknown method 501"},
	"valid/escnull":    {code: pass, why: "%00 stays escaped; REGISTER is the handler's 405"},
	"valid/intmeth":    {code: pass, why: "BEL, NUL, DEL only inside quoted-pairs; methods compared case-insensitively"},
	"valid/longreq":    {code: pass, why: "43 headers, no Via branch (RFC 2543 matching in sipgo)"},
	"valid/lwsdisp":    {code: pass},
	"valid/mpart01":    {code: pass, why: "MESSAGE's body is not judged; the handler answers 405"},
	"valid/noreason":   {response: true},
	"valid/semiuri":    {code: pass},
	"valid/transports": {code: pass},
	"valid/unreason":   {response: true},
	"valid/wsinv":      {code: pass, why: "\"tag = 98asjd8\": whitespace around the parameter name"},

	// invalid (RFC 4475 §3.1.2, §3.2, §3.3, §3.4; test is sipgo's own)
	"invalid/badaspec":   {parserRejects: true},
	"invalid/badbranch":  {code: 400, cause: CauseBadBranch, why: "RFC 4475 §3.2.1 allows 400"},
	"invalid/baddate":    {code: pass, why: "RFC 4475 §3.1.2.12: the Date is to be ignored, not refused"},
	"invalid/baddn":      {parserRejects: true},
	"invalid/badinv01":   {parserRejects: true},
	"invalid/badvers":    {code: 505, cause: CauseVersion},
	"invalid/bcast":      {response: true},
	"invalid/bext01":     {code: 420, cause: CauseUnsupported},
	"invalid/bigcode":    {parserRejects: true},
	"invalid/clerr":      {parserRejects: true, why: "Content-Length 9999 beyond the datagram"},
	"invalid/cparam01":   {code: pass, why: "valid REGISTER (RFC 4475 §3.3.12); the handler answers 405"},
	"invalid/cparam02":   {code: pass, why: "valid REGISTER (RFC 4475 §3.3.13); the handler answers 405"},
	"invalid/escruri":    {code: 400, cause: CauseBadRequestURI},
	"invalid/insuf":      {code: 0, cause: CauseMissingCallID, why: "no Call-ID: dropped, not answered"},
	"invalid/inv2543":    {code: 400, cause: CauseMissingMaxFwd, why: "RFC 2543 clients refused (package doc)"},
	"invalid/invut":      {code: 415, cause: CauseBodyType},
	"invalid/ltgtruri":   {parserRejects: true},
	"invalid/lwsruri":    {parserRejects: true},
	"invalid/lwsstart":   {parserRejects: true},
	"invalid/mcl01":      {code: 400, cause: CauseConflictingCLen},
	"invalid/mismatch01": {code: 400, cause: CauseCSeqMismatch},
	"invalid/mismatch02": {code: 400, cause: CauseCSeqMismatch},
	"invalid/multi01":    {code: 400, cause: CauseDuplicateCallID},
	"invalid/ncl":        {parserRejects: true},
	"invalid/novelsc":    {parserRejects: true},
	"invalid/quotbal":    {parserRejects: true},
	"invalid/regaut01":   {code: pass, why: "REGISTER with an unknown auth scheme: the handler's 405"},
	"invalid/regbadct":   {code: pass, why: "REGISTER: the handler answers 405"},
	"invalid/regescrt":   {code: pass, why: "REGISTER: the handler answers 405"},
	"invalid/scalar02":   {parserRejects: true},
	"invalid/scalarlg":   {parserRejects: true},
	"invalid/sdp01":      {code: 406, cause: CauseNotAcceptable},
	"invalid/test":       {parserRejects: true},
	"invalid/trws":       {parserRejects: true},
	"invalid/unkscm":     {code: 416, cause: CauseURIScheme},
	"invalid/unksm2":     {code: 400, cause: CauseBadFrom, why: "From is an http URI, To an isbn URI"},
	"invalid/zeromf":     {code: pass, why: "OPTIONS with Max-Forwards 0 is answered by its endpoint (package doc)"},
}

const tortureDir = "../testdata/torture"

// TestTortureTableCoversFiles: the table names every file and no other.
func TestTortureTableCoversFiles(t *testing.T) {
	files := corpusNames(t, tortureDir, "valid", "invalid")
	for name := range files {
		if _, ok := tortureTable[name]; !ok {
			t.Errorf("%s has no row in the table", name)
		}
	}
	for name := range tortureTable {
		if !files[name] {
			t.Errorf("row %s has no file", name)
		}
	}
}

func TestTorture(t *testing.T) {
	for name, want := range tortureTable {
		t.Run(name, func(t *testing.T) {
			checkFile(t, filepath.Join(tortureDir, name+".dat"), Options{}, want)
		})
	}
}

// corpusNames lists dir/sub/*.dat as "sub/name".
func corpusNames(t *testing.T, dir string, subs ...string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, sub := range subs {
		m, err := filepath.Glob(filepath.Join(dir, sub, "*.dat"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			names[filepath.Join(sub, filepath.Base(f[:len(f)-len(".dat")]))] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("no files under %s", dir)
	}
	return names
}

// checkFile parses one file as a datagram and holds it to want.
func checkFile(t *testing.T, path string, o Options, want outcome) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := sip.NewParser().ParseSIP(data)
	if want.parserRejects {
		if err == nil {
			t.Fatalf("parser accepted it; the table says it rejects")
		}
		return
	}
	if err != nil {
		t.Fatalf("parser rejected it: %v", err)
	}
	req, ok := msg.(*sip.Request)
	if want.response {
		if ok {
			t.Fatalf("a request; the table says a response")
		}
		return
	}
	if !ok {
		t.Fatalf("a response; the table says a request")
	}
	r := Check(req, o)
	if want.code == pass {
		if r != nil {
			t.Fatalf("refused %d %q (%s); want it through", r.Code, r.Reason, r.Cause)
		}
		assertComplete(t, req, o)
		return
	}
	if r == nil {
		t.Fatalf("passed; want %d (%s)", want.code, want.cause)
	}
	if r.Code != want.code || r.Cause != want.cause {
		t.Fatalf("got %d %q (%s); want %d (%s)", r.Code, r.Reason, r.Cause, want.code, want.cause)
	}
}

// assertComplete: a request that passed Check has every mandatory
// header, once where it must be once, as sipgo's accessors see them.
func assertComplete(t testing.TB, req *sip.Request, o Options) {
	t.Helper()
	if req.Via() == nil || req.From() == nil || req.To() == nil || req.CallID() == nil ||
		req.CSeq() == nil || req.MaxForwards() == nil {
		t.Fatalf("passed without a mandatory header")
	}
	if o.Stream && req.ContentLength() == nil {
		t.Fatalf("passed on a stream without Content-Length")
	}
	if tag, ok := paramGet(req.From().Params, "tag"); !ok || tag == "" {
		t.Fatalf("passed without a From tag")
	}
	for _, name := range []string{"call-id", "cseq", "from", "to", "max-forwards"} {
		if n := len(req.GetHeaders(name)); n != 1 {
			t.Fatalf("passed with %d %s headers", n, name)
		}
	}
	if req.Method == sip.INVITE && len(req.GetHeaders("contact")) != 1 {
		t.Fatalf("INVITE passed without exactly one Contact")
	}
}
