package validate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// knownReasons: every reason phrase a Refusal may carry. A phrase
// outside it would be one built from the request.
func knownReasons() map[string]bool {
	known := map[string]bool{}
	for _, r := range []rule{ruleVersion, ruleBadHeader, ruleMissingFrom, ruleMissingTo, ruleMissingMaxFwd,
		ruleDuplicateCallID, ruleDuplicateCSeq, ruleDuplicateFrom, ruleDuplicateTo, ruleDuplicateMaxFwd,
		ruleDuplicateCType, ruleConflictingCLen, ruleBadMethod, ruleBadCSeq, ruleCSeqMismatch, ruleBadCallID,
		ruleBadMaxFwd, ruleBadVia, ruleBadBranch, ruleBadFrom, ruleBadTo, ruleMissingFromTag, ruleBadRequestURI,
		ruleURIScheme, ruleTooManyHops, ruleMissingCLen, ruleBodyTooLarge, ruleCLenMismatch, ruleMissingContact,
		ruleDuplicateContact, ruleBadContact, ruleBadRequire, ruleUnsupported, ruleMissingCType,
		ruleContentEncoding, ruleBodyType, ruleNotAcceptable} {
		known[r.reason] = true
	}
	return known
}

// FuzzCheck: parsed by sipgo, then checked for a datagram and for a
// stream, Check never panics; a request it lets through has every
// mandatory header; a refusal carries one of the fixed reason phrases,
// and headers only with 415 and 420.
func FuzzCheck(f *testing.F) {
	for _, dir := range []string{tortureDir + "/valid", tortureDir + "/invalid", malformedDir} {
		files, err := filepath.Glob(filepath.Join(dir, "*.dat"))
		if err != nil || len(files) == 0 {
			f.Fatalf("no seeds in %s: %v", dir, err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(invite().text()))
	known := knownReasons()
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := sip.NewParser().ParseSIP(data)
		if err != nil {
			return
		}
		req, ok := msg.(*sip.Request)
		if !ok {
			return
		}
		for _, o := range []Options{{}, {Stream: true, Supported: []string{"timer"}}} {
			r := Check(req, o)
			if r == nil {
				assertComplete(t, req, o)
				continue
			}
			_ = r.Error()
			if r.Code == 0 {
				if r.Reason != "" || len(r.Headers) > 0 {
					t.Fatalf("a drop with a reason or headers: %+v", r)
				}
				continue
			}
			if !known[r.Reason] {
				t.Fatalf("reason %q is not a fixed phrase", r.Reason)
			}
			if len(r.Headers) > 0 && r.Code != sip.StatusUnsupportedMediaType && r.Code != sip.StatusBadExtension {
				t.Fatalf("%d with headers", r.Code)
			}
		}
	})
}
