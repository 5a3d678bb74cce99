package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// outcome is what becomes of one message: the parser rejects it
// (sipgo's transport drops it, counted, before any handler), the stream
// parser waits for more (partial: a Content-Length beyond the data; the
// connection's read deadline ends it), it is a response (not Check's
// business), Check lets it through (code -1), or Check refuses it with
// code (0: dropped).
type outcome struct {
	parserRejects bool
	partial       bool
	response      bool
	code          int    // -1: passes Check
	cause         string // the Refusal's Cause when refused
	why           string
}

// row is what becomes of one file sent as a UDP datagram (parsed by
// sipgo's ParseSIP, checked with Options{}) and written to a TCP stream
// (sipgo's stream parser, Options{Stream: true}): one outcome per message
// the stream yields, the last one the stream's error if it ends in one.
// A nil tcp is the udp outcome alone.
type row struct {
	udp outcome
	tcp []outcome
}

const pass = -1

// tortureTable: every file of sip/testdata/torture (RFC 4475's messages
// as sipgo ships them), valid or invalid, and what becomes of it over
// UDP (sipgo's datagram parser, Options{Stream: false}).
var tortureTable = map[string]row{
	// valid (RFC 4475 §3.1.1; mpart01 is RFC 5621's example)
	"valid/dblreq": {udp: outcome{code: pass, why: "the REGISTER; the INVITE after Content-Length 0 is junk on UDP"},
		tcp: []outcome{{code: pass}, {code: 400, cause: CauseMissingContact, why: "on a stream the INVITE is a request of its own"},
			{parserRejects: true, why: "the CRLF after the INVITE's body"}}},
	"valid/esc01":   {udp: outcome{code: pass}},
	"valid/esc02":   {udp: outcome{code: pass, why: "the handler answers the unknown method 501"}},
	"valid/escnull": {udp: outcome{code: pass, why: "%00 stays escaped; REGISTER is the handler's 405"}},
	// Guards the quoted-pair exception and the case-insensitive CSeq
	// method; mutations caught: clean() without the exception, == for
	// EqualFold (each refuses intmeth).
	"valid/intmeth":    {udp: outcome{code: pass, why: "BEL, NUL, DEL only inside quoted-pairs; methods compared case-insensitively"}},
	"valid/longreq":    {udp: outcome{code: pass, why: "43 headers, no Via branch (RFC 2543 matching in sipgo)"}},
	"valid/lwsdisp":    {udp: outcome{code: pass}},
	"valid/mpart01":    {udp: outcome{code: pass, why: "MESSAGE's body is not judged; the handler answers 405"}},
	"valid/noreason":   {udp: outcome{response: true}},
	"valid/semiuri":    {udp: outcome{code: pass}},
	"valid/transports": {udp: outcome{code: pass}},
	"valid/unreason":   {udp: outcome{response: true}},
	// Guards the trimmed parameter name; mutation caught: Params.Get("tag")
	// (wsinv refused for a missing From tag).
	"valid/wsinv": {udp: outcome{code: pass, why: "\"tag = 98asjd8\": whitespace around the parameter name"}},

	// invalid (RFC 4475 §3.1.2, §3.2, §3.3, §3.4; test is sipgo's own)
	"invalid/badaspec":  {udp: outcome{parserRejects: true}},
	"invalid/badbranch": {udp: outcome{code: 400, cause: CauseBadBranch, why: "RFC 4475 §3.2.1 allows 400"}},
	"invalid/baddate":   {udp: outcome{code: pass, why: "RFC 4475 §3.1.2.12: the Date is to be ignored, not refused"}},
	"invalid/baddn":     {udp: outcome{parserRejects: true}, tcp: []outcome{{partial: true, why: "no empty line ends the headers"}}},
	"invalid/badinv01":  {udp: outcome{parserRejects: true}},
	"invalid/badvers":   {udp: outcome{code: 505, cause: CauseVersion}},
	"invalid/bcast":     {udp: outcome{response: true}},
	"invalid/bext01":    {udp: outcome{code: 420, cause: CauseUnsupported}},
	"invalid/bigcode":   {udp: outcome{parserRejects: true}},
	"invalid/clerr":     {udp: outcome{parserRejects: true, why: "Content-Length 9999 beyond the datagram"}, tcp: []outcome{{partial: true}}},
	"invalid/cparam01":  {udp: outcome{code: pass, why: "valid REGISTER (RFC 4475 §3.3.12); the handler answers 405"}},
	"invalid/cparam02":  {udp: outcome{code: pass, why: "valid REGISTER (RFC 4475 §3.3.13); the handler answers 405"}},
	"invalid/escruri":   {udp: outcome{code: 400, cause: CauseBadRequestURI}},
	"invalid/insuf":     {udp: outcome{code: 0, cause: CauseMissingCallID, why: "no Call-ID: dropped, not answered"}},
	"invalid/inv2543":   {udp: outcome{code: 400, cause: CauseMissingMaxFwd, why: "RFC 2543 clients refused (package doc)"}, tcp: []outcome{{parserRejects: true, why: "no Content-Length on a stream"}}},
	"invalid/invut":     {udp: outcome{code: 415, cause: CauseBodyType}},
	"invalid/ltgtruri":  {udp: outcome{parserRejects: true}},
	"invalid/lwsruri":   {udp: outcome{parserRejects: true}},
	"invalid/lwsstart":  {udp: outcome{parserRejects: true}},
	// Mutation caught: the Content-Length conflict unchecked (the last
	// one matches the body, and mcl01 passes).
	"invalid/mcl01":      {udp: outcome{code: 400, cause: CauseConflictingCLen}, tcp: []outcome{{code: 400, cause: CauseConflictingCLen}, {parserRejects: true, why: "the body's rest"}}},
	"invalid/mismatch01": {udp: outcome{code: 400, cause: CauseCSeqMismatch}},
	"invalid/mismatch02": {udp: outcome{code: 400, cause: CauseCSeqMismatch}},
	"invalid/multi01":    {udp: outcome{code: 400, cause: CauseDuplicateCallID}},
	"invalid/ncl":        {udp: outcome{parserRejects: true}},
	"invalid/novelsc":    {udp: outcome{parserRejects: true}},
	"invalid/quotbal":    {udp: outcome{parserRejects: true}},
	"invalid/regaut01":   {udp: outcome{code: pass, why: "REGISTER with an unknown auth scheme: the handler's 405"}},
	"invalid/regbadct":   {udp: outcome{code: pass, why: "REGISTER: the handler answers 405"}},
	"invalid/regescrt":   {udp: outcome{code: pass, why: "REGISTER: the handler answers 405"}},
	"invalid/scalar02":   {udp: outcome{parserRejects: true}},
	"invalid/scalarlg":   {udp: outcome{parserRejects: true}},
	"invalid/sdp01":      {udp: outcome{code: 406, cause: CauseNotAcceptable}},
	"invalid/test":       {udp: outcome{parserRejects: true}},
	"invalid/trws":       {udp: outcome{parserRejects: true}},
	"invalid/unkscm":     {udp: outcome{code: 416, cause: CauseURIScheme}},
	"invalid/unksm2":     {udp: outcome{code: 400, cause: CauseBadFrom, why: "From is an http URI, To an isbn URI"}},
	// Mutation caught: 483 on every method (zeromf refused).
	"invalid/zeromf": {udp: outcome{code: pass, why: "OPTIONS with Max-Forwards 0 is answered by its endpoint (package doc)"}},
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
			data := readFile(t, filepath.Join(tortureDir, name+".dat"))
			checkDatagram(t, data, Options{}, want.udp)
			tcp := want.tcp
			if tcp == nil {
				tcp = []outcome{want.udp}
			}
			checkStream(t, data, Options{Stream: true}, tcp)
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

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkDatagram parses data as a UDP datagram and holds it to want.
func checkDatagram(t *testing.T, data []byte, o Options, want outcome) {
	t.Helper()
	msg, err := sip.NewParser().ParseSIP(data)
	if want.parserRejects {
		if err == nil {
			t.Fatalf("udp: parser accepted it; the table says it rejects")
		}
		return
	}
	if err != nil {
		t.Fatalf("udp: parser rejected it: %v", err)
	}
	checkMessage(t, "udp", msg, o, want)
}

// checkStream writes data to a stream parser and holds each message it
// yields, and its final state, to want in turn.
func checkStream(t *testing.T, data []byte, o Options, want []outcome) {
	t.Helper()
	ps := sip.NewParser().NewSIPStream()
	defer ps.Close()
	var msgs []sip.Message
	err := ps.ParseSIPStream(data, func(m sip.Message) { msgs = append(msgs, m) })
	n := len(msgs)
	if err != nil {
		n++
	}
	if n != len(want) {
		t.Fatalf("tcp: %d messages and error %v; the table says %d outcomes", len(msgs), err, len(want))
	}
	for i, m := range msgs {
		if want[i].parserRejects || want[i].partial {
			t.Fatalf("tcp: message %d parsed; the table says the parser stops", i)
		}
		checkMessage(t, fmt.Sprintf("tcp message %d", i), m, o, want[i])
	}
	if err == nil {
		return
	}
	last := want[len(want)-1]
	switch partial := errors.Is(err, sip.ErrParseSipPartial); {
	case partial && !last.partial:
		t.Fatalf("tcp: the parser waits for more; the table says %+v", last)
	case !partial && !last.parserRejects:
		t.Fatalf("tcp: the parser rejects (%v); the table says %+v", err, last)
	}
}

func checkMessage(t *testing.T, where string, msg sip.Message, o Options, want outcome) {
	t.Helper()
	req, ok := msg.(*sip.Request)
	if want.response {
		if ok {
			t.Fatalf("%s: a request; the table says a response", where)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: a response; the table says a request", where)
	}
	r := Check(req, o)
	if want.code == pass {
		if r != nil {
			t.Fatalf("%s: refused %d %q (%s); want it through", where, r.Code, r.Reason, r.Cause)
		}
		assertComplete(t, req, o)
		return
	}
	if r == nil {
		t.Fatalf("%s: passed; want %d (%s)", where, want.code, want.cause)
	}
	if r.Code != want.code || r.Cause != want.cause {
		t.Fatalf("%s: got %d %q (%s); want %d (%s)", where, r.Code, r.Reason, r.Cause, want.code, want.cause)
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
