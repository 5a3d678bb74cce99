package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The request headers of a delivery.
const (
	// SignatureHeader: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
	// "<t>.<body>")>". A receiver may see more than one v1 (reserved for
	// a secret's rotation) and keys it does not know (ignore them).
	SignatureHeader = "Brisvox-Signature"
	// IdempotencyHeader: "<call id>/<url index>", the same on every
	// attempt of one delivery: a receiver that has seen it answers 2xx
	// and does nothing.
	IdempotencyHeader = "Idempotency-Key"
	// AttemptHeader: 1 for the first attempt, then 2, 3, ... (after a
	// restart of the node the count starts again).
	AttemptHeader = "Brisvox-Attempt"
)

// DefaultTolerance is Verify's tolerance when given 0.
const DefaultTolerance = 5 * time.Minute

// Sign returns the signature header's value for body sent at t.
func Sign(secret, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a delivery's signature header against its body (the
// bytes as received, before any parsing) at now: ErrMalformedSignature,
// ErrBadSignature, or ErrExpired when the timestamp is more than
// tolerance (0: DefaultTolerance) from now either way. A receiver then
// uses the Idempotency-Key to drop repeats.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if header == "" {
		return fmt.Errorf("%w: the %s header is missing", ErrMalformedSignature, SignatureHeader)
	}
	var (
		ts   string
		sigs [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: a part is not key=value", ErrMalformedSignature)
		}
		switch k {
		case "t":
			if ts != "" {
				return fmt.Errorf("%w: t is given twice", ErrMalformedSignature)
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return fmt.Errorf("%w: v1 is not %d hex digits", ErrMalformedSignature, 2*sha256.Size)
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" {
		return fmt.Errorf("%w: no t (the unix time of the signature)", ErrMalformedSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < 0 {
		return fmt.Errorf("%w: t is not unix seconds", ErrMalformedSignature)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrMalformedSignature)
	}
	want := mac(secret, ts, body)
	ok := false
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			ok = true
		}
	}
	if !ok {
		return ErrBadSignature
	}
	age := now.Sub(time.Unix(sec, 0))
	if age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: signed %s from now, tolerance %s", ErrExpired, age.Round(time.Second), tolerance)
	}
	return nil
}
