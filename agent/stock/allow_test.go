package stock

import (
	"errors"
	"strings"
	"testing"
)

func TestAllowlistMatches(t *testing.T) {
	a, err := NewAllowlist([]string{"+33123456789", "sip:desk@PBX.example", "sip:*@support.example", "+4420*", "sips:sales-*@pbx.example:5061", "+1 (555) 010-9999"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dest, norm string
		ok               bool
	}{
		{"exact number", "+33123456789", "+33123456789", true},
		// Catches a prefix match on an exact entry (HasPrefix in place of ==).
		{"longer number", "+331234567890", "+331234567890", false},
		{"shorter number", "+3312345678", "+3312345678", false},
		{"prefix", "+442071234567", "+442071234567", true},
		// Catches a prefix that matches its own digits alone.
		{"prefix itself", "+4420", "+4420", false},
		{"other country", "+442171234567", "+442171234567", false},
		{"number written with separators in the file", "+15550109999", "+15550109999", true},
		{"uri host case", "sip:desk@pbx.EXAMPLE", "sip:desk@pbx.example", true},
		{"uri params dropped", "sip:desk@pbx.example;transport=tcp", "sip:desk@pbx.example", true},
		// Catches params kept in what is dialled: maddr would send the
		// INVITE to another host than the one allowed.
		{"maddr dropped", "sip:desk@pbx.example;maddr=evil.example", "sip:desk@pbx.example", true},
		{"headers dropped", "sip:desk@pbx.example?subject=x", "sip:desk@pbx.example", true},
		{"user is case-sensitive", "sip:Desk@pbx.example", "sip:Desk@pbx.example", false},
		{"any user", "sip:anyone@support.example", "sip:anyone@support.example", true},
		{"any user needs a user", "sip:support.example", "sip:support.example", false},
		{"subdomain is not the host", "sip:x@evil.support.example", "sip:x@evil.support.example", false},
		{"host suffix is not the host", "sip:x@support.example.evil", "sip:x@support.example.evil", false},
		{"user prefix", "sips:sales-eu@pbx.example:5061", "sips:sales-eu@pbx.example:5061", true},
		{"user prefix other port", "sips:sales-eu@pbx.example", "sips:sales-eu@pbx.example", false},
		{"user prefix wrong scheme", "sip:sales-eu@pbx.example:5061", "sip:sales-eu@pbx.example:5061", false},
		{"number is not a uri", "sip:+33123456789@pbx.example", "sip:+33123456789@pbx.example", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			norm, ok, err := a.Allows(tt.dest)
			if err != nil {
				t.Fatalf("Allows: %v", err)
			}
			if ok != tt.ok || norm != tt.norm {
				t.Errorf("Allows = %q, %v; want %q, %v", norm, ok, tt.norm, tt.ok)
			}
		})
	}
}

func TestNormalizeRefusesHostile(t *testing.T) {
	for _, dest := range []string{
		"", "+33123456789\r\nVia: x", "sip:desk@pbx.example\n", "+3312\x00", "sip:desk@pbx.example\rX",
		"+33 123", "sip:desk@ pbx.example", "sip:<desk@pbx.example>", "sip:\"a\"@b", "tel:+33123456789",
		"+0123", "+1", "+1234567890123456", "sip:user:pass@pbx.example", "sip:a@b@c", "sip:@pbx.example",
		"sip:desk@", "sip:desk@pbx.example:0", "sip:desk@pbx.example:99999", "sip:desk@pbx..example",
		"sip:desk@[zz]", "sip:d\u00e9sk@pbx.example", strings.Repeat("1", MaxDestinationBytes) + "+", "sip:desk@*.example",
	} {
		if d, err := Normalize(dest); !errors.Is(err, ErrBadDestination) {
			t.Errorf("Normalize(%q) = %v, %v; want ErrBadDestination", dest, d, err)
		} else if dest != "" && len(dest) > 3 && strings.Contains(err.Error(), dest) {
			t.Errorf("the error quotes the destination: %v", err)
		}
	}
}

func TestAllowPatternGrammar(t *testing.T) {
	tests := []struct {
		pat string
		ok  bool
	}{
		{"+33123456789", true},
		{"+4420*", true},
		{"sip:desk@pbx.example", true},
		{"sip:*@support.example", true},
		{"sip:sales-*@pbx.example", true},
		{"sips:desk@[2001:db8::1]:5061", true},
		{"sip:desk@192.0.2.1", true},
		// Patterns that would match everything or a whole country.
		{"*", false},
		{"+*", false},
		{"+1*", false},
		// Catches the digit floor of a prefix lowered below four.
		{"+442*", false},
		{"sip:*", false},
		{"sip:*@*", false},
		{"sip:desk@*", false},
		{"sip:desk@pbx.*", false},
		{"sip:*desk@pbx.example", false},
		{"sip:de*sk@pbx.example", false},
		{"+44*20", false},
		{"+0044*", false},
		{"sip:desk@pbx.example;transport=tcp", false},
		{"tel:+33123456789", false},
		{"desk@pbx.example", false},
		{"", false},
		{"sip:desk@pbx.example\n", false},
		{"+1234567890123456", false},
	}
	for _, tt := range tests {
		err := CheckAllowPattern(tt.pat)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAllowPattern(%q) = %v; want ok %v", tt.pat, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrAllowPattern) {
			t.Errorf("CheckAllowPattern(%q) = %v; want ErrAllowPattern", tt.pat, err)
		}
	}
	if _, err := NewAllowlist(nil); !errors.Is(err, ErrAllowPattern) {
		t.Errorf("empty allowlist: %v", err)
	}
}

// FuzzAllowlist: no destination ever matches outside its pattern's
// domain: what Allows accepts is canonical (Normalize of it is itself), a
// URI's host is the pattern's host exactly, no control byte survives.
func FuzzAllowlist(f *testing.F) {
	for _, s := range []string{"+33123456789", "sip:desk@pbx.example;maddr=x", "sip:a@support.example", "+442071234567", "sip:x\r\n@y", "sips:sales-1@pbx.example:5061"} {
		f.Add(s, "sip:*@support.example")
	}
	f.Fuzz(func(t *testing.T, dest, pat string) {
		pats := []string{"+33123456789", "sip:*@support.example", "+4420*", "sips:sales-*@pbx.example:5061"}
		if CheckAllowPattern(pat) == nil {
			pats = append(pats, pat)
		}
		a, err := NewAllowlist(pats)
		if err != nil {
			t.Fatalf("valid patterns refused: %v", err)
		}
		norm, ok, err := a.Allows(dest)
		if err != nil {
			if !errors.Is(err, ErrBadDestination) {
				t.Fatalf("error %v does not wrap ErrBadDestination", err)
			}
			return
		}
		d, err := Normalize(norm)
		if err != nil || d.String() != norm {
			t.Fatalf("normalised %q is not canonical: %q, %v", norm, d.String(), err)
		}
		if strings.ContainsAny(norm, "\r\n\x00 ;?<>\"") {
			t.Fatalf("normalised %q holds a forbidden byte", norm)
		}
		if ok && d.Number == "" && d.Host != "support.example" && d.Host != "pbx.example:5061" {
			if p, _ := parsePattern(pat); p.host != d.Host {
				t.Fatalf("%q allowed at host %q", dest, d.Host)
			}
		}
	})
}
