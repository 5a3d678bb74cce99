package validate

import (
	"strconv"

	"github.com/emiago/sipgo/sip"
)

// Refusal is why a request is refused: the code and reason phrase to
// answer, and headers to add (Unsupported for 420, Accept for 415,
// Accept-Encoding for an encoded body). Code 0 means "drop, no answer"
// (a request too broken to answer: no Via, or no usable Call-ID/CSeq, or
// too many headers). Reason is one of a fixed set of short phrases and
// Cause one of the Cause constants (a metric label); neither carries any
// of the request's text.
type Refusal struct {
	Code    int
	Reason  string
	Headers []sip.Header
	Cause   string
}

var _ error = (*Refusal)(nil)

// Error says the code, the reason and the cause.
func (r *Refusal) Error() string {
	if r.Code == 0 {
		return "validate: dropped: " + r.Cause
	}
	return "validate: " + strconv.Itoa(r.Code) + " " + r.Reason + ": " + r.Cause
}

// Unwrap is ErrDropped for Code 0, ErrRefused otherwise.
func (r *Refusal) Unwrap() error {
	if r.Code == 0 {
		return ErrDropped
	}
	return ErrRefused
}

// Drop reports whether the request is to be dropped unanswered.
func (r *Refusal) Drop() bool { return r.Code == 0 }

// Causes: the Cause of each Refusal, one per check.
const (
	CauseNoRequest        = "no_request"
	CauseTooManyHeaders   = "too_many_headers"
	CauseMissingVia       = "missing_via"
	CauseMissingCSeq      = "missing_cseq"
	CauseMissingCallID    = "missing_call_id"
	CauseVersion          = "sip_version"
	CauseBadHeader        = "bad_header"
	CauseMissingFrom      = "missing_from"
	CauseMissingTo        = "missing_to"
	CauseMissingMaxFwd    = "missing_max_forwards"
	CauseDuplicateCallID  = "duplicate_call_id"
	CauseDuplicateCSeq    = "duplicate_cseq"
	CauseDuplicateFrom    = "duplicate_from"
	CauseDuplicateTo      = "duplicate_to"
	CauseDuplicateMaxFwd  = "duplicate_max_forwards"
	CauseDuplicateCType   = "duplicate_content_type"
	CauseConflictingCLen  = "conflicting_content_length"
	CauseBadMethod        = "bad_method"
	CauseBadCSeq          = "bad_cseq"
	CauseCSeqMismatch     = "cseq_method_mismatch"
	CauseBadCallID        = "bad_call_id"
	CauseBadMaxFwd        = "bad_max_forwards"
	CauseBadVia           = "bad_via"
	CauseBadBranch        = "bad_via_branch"
	CauseBadFrom          = "bad_from"
	CauseBadTo            = "bad_to"
	CauseMissingFromTag   = "missing_from_tag"
	CauseBadRequestURI    = "bad_request_uri"
	CauseURIScheme        = "unsupported_uri_scheme"
	CauseTooManyHops      = "too_many_hops"
	CauseMissingCLen      = "missing_content_length"
	CauseBodyTooLarge     = "body_too_large"
	CauseCLenMismatch     = "content_length_mismatch"
	CauseMissingContact   = "missing_contact"
	CauseDuplicateContact = "duplicate_contact"
	CauseBadContact       = "bad_contact"
	CauseBadRequire       = "bad_require"
	CauseUnsupported      = "unsupported_extension"
	CauseMissingCType     = "missing_content_type"
	CauseContentEncoding  = "unsupported_content_encoding"
	CauseBodyType         = "unsupported_body_type"
	CauseNotAcceptable    = "not_acceptable"
)

// rule is one check's answer: the code, the fixed phrase, the cause.
type rule struct {
	code   int
	reason string
	cause  string
}

// The rules. Reason phrases follow RFC 3261 §21 for the code, or name
// the header at fault for a 400.
var (
	ruleNoRequest        = rule{0, "", CauseNoRequest}
	ruleTooManyHeaders   = rule{0, "", CauseTooManyHeaders}
	ruleMissingVia       = rule{0, "", CauseMissingVia}
	ruleMissingCSeq      = rule{0, "", CauseMissingCSeq}
	ruleMissingCallID    = rule{0, "", CauseMissingCallID}
	ruleVersion          = rule{sip.StatusVersionNotSupported, "Version Not Supported", CauseVersion}
	ruleBadHeader        = rule{sip.StatusBadRequest, "Bad Header", CauseBadHeader}
	ruleMissingFrom      = rule{sip.StatusBadRequest, "Missing From", CauseMissingFrom}
	ruleMissingTo        = rule{sip.StatusBadRequest, "Missing To", CauseMissingTo}
	ruleMissingMaxFwd    = rule{sip.StatusBadRequest, "Missing Max-Forwards", CauseMissingMaxFwd}
	ruleDuplicateCallID  = rule{sip.StatusBadRequest, "Duplicate Call-ID", CauseDuplicateCallID}
	ruleDuplicateCSeq    = rule{sip.StatusBadRequest, "Duplicate CSeq", CauseDuplicateCSeq}
	ruleDuplicateFrom    = rule{sip.StatusBadRequest, "Duplicate From", CauseDuplicateFrom}
	ruleDuplicateTo      = rule{sip.StatusBadRequest, "Duplicate To", CauseDuplicateTo}
	ruleDuplicateMaxFwd  = rule{sip.StatusBadRequest, "Duplicate Max-Forwards", CauseDuplicateMaxFwd}
	ruleDuplicateCType   = rule{sip.StatusBadRequest, "Duplicate Content-Type", CauseDuplicateCType}
	ruleConflictingCLen  = rule{sip.StatusBadRequest, "Conflicting Content-Length", CauseConflictingCLen}
	ruleBadMethod        = rule{sip.StatusBadRequest, "Bad Method", CauseBadMethod}
	ruleBadCSeq          = rule{sip.StatusBadRequest, "Bad CSeq", CauseBadCSeq}
	ruleCSeqMismatch     = rule{sip.StatusBadRequest, "CSeq Method Mismatch", CauseCSeqMismatch}
	ruleBadCallID        = rule{sip.StatusBadRequest, "Bad Call-ID", CauseBadCallID}
	ruleBadMaxFwd        = rule{sip.StatusBadRequest, "Bad Max-Forwards", CauseBadMaxFwd}
	ruleBadVia           = rule{sip.StatusBadRequest, "Bad Via", CauseBadVia}
	ruleBadBranch        = rule{sip.StatusBadRequest, "Bad Via Branch", CauseBadBranch}
	ruleBadFrom          = rule{sip.StatusBadRequest, "Bad From", CauseBadFrom}
	ruleBadTo            = rule{sip.StatusBadRequest, "Bad To", CauseBadTo}
	ruleMissingFromTag   = rule{sip.StatusBadRequest, "Missing From Tag", CauseMissingFromTag}
	ruleBadRequestURI    = rule{sip.StatusBadRequest, "Bad Request-URI", CauseBadRequestURI}
	ruleURIScheme        = rule{sip.StatusRequestedRangeNotSatisfiable, "Unsupported URI Scheme", CauseURIScheme}
	ruleTooManyHops      = rule{sip.StatusTooManyHops, "Too Many Hops", CauseTooManyHops}
	ruleMissingCLen      = rule{sip.StatusBadRequest, "Missing Content-Length", CauseMissingCLen}
	ruleBodyTooLarge     = rule{sip.StatusRequestEntityTooLarge, "Request Entity Too Large", CauseBodyTooLarge}
	ruleCLenMismatch     = rule{sip.StatusBadRequest, "Content-Length Mismatch", CauseCLenMismatch}
	ruleMissingContact   = rule{sip.StatusBadRequest, "Missing Contact", CauseMissingContact}
	ruleDuplicateContact = rule{sip.StatusBadRequest, "Duplicate Contact", CauseDuplicateContact}
	ruleBadContact       = rule{sip.StatusBadRequest, "Bad Contact", CauseBadContact}
	ruleBadRequire       = rule{sip.StatusBadRequest, "Bad Require", CauseBadRequire}
	ruleUnsupported      = rule{sip.StatusBadExtension, "Bad Extension", CauseUnsupported}
	ruleMissingCType     = rule{sip.StatusBadRequest, "Missing Content-Type", CauseMissingCType}
	ruleContentEncoding  = rule{sip.StatusUnsupportedMediaType, "Unsupported Media Type", CauseContentEncoding}
	ruleBodyType         = rule{sip.StatusUnsupportedMediaType, "Unsupported Media Type", CauseBodyType}
	ruleNotAcceptable    = rule{sip.StatusNotAcceptable, "Not Acceptable", CauseNotAcceptable}
)

func (r rule) refuse(headers ...sip.Header) *Refusal {
	return &Refusal{Code: r.code, Reason: r.reason, Headers: headers, Cause: r.cause}
}
