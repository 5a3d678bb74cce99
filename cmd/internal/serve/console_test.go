package serve

import (
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"go.uber.org/goleak"
)

// fetchRaw does a GET over the in-memory listener with no token.
func fetchRaw(t *testing.T, ln *pipetest.Listener, path string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://brisvox" + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

var pageRefs = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// TestConsoleServed: the console's page and assets are served without a
// token, each with the strict Content-Security-Policy, and hold no data
// while a call is live (its id is in none of them): the data comes from the
// operator API with the token. Only the assets are under
// /operator/console/ (no listing, no second copy of the page, not even a
// redirect to it), and every file the page names is served. Mutations
// caught (each seen failing): the CSP header not set on the assets; the
// page's name not refused under /operator/console/ (index.html answered
// with a redirect); the page's script linked as "console.js" (not found
// from /operator/).
func TestConsoleServed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		s.mountConsole()
		c := newFakeConn("call-c0ffee", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c)
		time.Sleep(time.Second)
		if live := s.Live(); len(live) != 1 {
			t.Fatalf("live calls %v, want the test's one", live)
		}

		for _, tc := range []struct {
			name, path, wantType string
			wantStatus           int
			wantBody             string
		}{
			{"page", "/operator/", "text/html", http.StatusOK, `<script src="console/console.js">`},
			{"script", "/operator/console/console.js", "text/javascript", http.StatusOK, "/operator/events"},
			{"style", "/operator/console/console.css", "text/css", http.StatusOK, "#calls"},
			{"no listing", "/operator/console/", "", http.StatusNotFound, ""},
			{"no second page", "/operator/console/index.html", "", http.StatusNotFound, ""},
			{"unknown asset", "/operator/console/app.js", "", http.StatusNotFound, ""},
			{"no subdirectory", "/operator/console/x/console.js", "", http.StatusNotFound, ""},
		} {
			// Not t.Run: subtests cannot start inside a synctest bubble.
			func() {
				code, h, body := fetchRaw(t, ln, tc.path)
				if code != tc.wantStatus {
					t.Errorf("%s: GET %s: %d, want %d", tc.name, tc.path, code, tc.wantStatus)
					return
				}
				if got := h.Get("Content-Security-Policy"); got != consoleCSP {
					t.Errorf("GET %s: Content-Security-Policy %q, want %q", tc.path, got, consoleCSP)
				}
				if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("GET %s: X-Content-Type-Options %q", tc.path, got)
				}
				if code != http.StatusOK {
					return
				}
				if got := h.Get("Content-Type"); !strings.HasPrefix(got, tc.wantType) {
					t.Errorf("GET %s: Content-Type %q, want %s", tc.path, got, tc.wantType)
				}
				if !strings.Contains(body, tc.wantBody) {
					t.Errorf("GET %s: no %q in it", tc.path, tc.wantBody)
				}
				for _, secret := range []string{"call-c0ffee", testToken} {
					if strings.Contains(body, secret) {
						t.Errorf("GET %s holds %q: the console's files must hold no data", tc.path, secret)
					}
				}
			}()
		}

		// Every file the page names is there (the favicon is the call
		// page's, at the root).
		_, _, page := fetchRaw(t, ln, "/operator/")
		refs := pageRefs.FindAllStringSubmatch(page, -1)
		if len(refs) < 3 {
			t.Fatalf("the page names %d files, want its script, its style and its icon", len(refs))
		}
		for _, m := range refs {
			path := m[1]
			if !strings.HasPrefix(path, "/") {
				path = "/operator/" + path
			}
			if code, _, _ := fetchRaw(t, ln, path); code != http.StatusOK {
				t.Errorf("the page names %s: GET %s is %d", m[1], path, code)
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}

// TestConsoleSource: what the page's policy and its privacy rules forbid
// is not in the console's files: no inline script or style and no inline
// event handler (the policy would block them: the page would break), no
// HTML parsed from strings (call ids and counters are outside input: text
// only), no address but this server's, and the token never in a URL or
// in localStorage. Mutation caught (seen failing): a line of console.js
// setting innerHTML.
func TestConsoleSource(t *testing.T) {
	read := func(name string) string {
		b, err := fs.ReadFile(consoleFiles, "console/"+name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// past.js (the past calls) is held to the same rules as console.js.
	html, js, css := read("index.html"), read("console.js")+read("past.js"), read("console.css")
	for _, tc := range []struct {
		name, file, text string
		bad              *regexp.Regexp
	}{
		{"inline script", "index.html", html, regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<script>`)},
		{"inline style element", "index.html", html, regexp.MustCompile(`<style`)},
		{"style attribute", "index.html", html, regexp.MustCompile(`\sstyle=`)},
		{"event handler attribute", "index.html", html, regexp.MustCompile(`\son[a-z]+=`)},
		{"HTML from strings", "console.js", js, regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`)},
		{"style attribute from script", "console.js", js, regexp.MustCompile(`setAttribute\(\s*["']style`)},
		{"the token in storage that outlives the tab", "console.js", js, regexp.MustCompile(`localStorage`)},
		{"the token in an address", "console.js", js, regexp.MustCompile(`[?&]token=`)},
		// The SVG namespace is a name, not an address.
		{"another host", "any", strings.ReplaceAll(html+js+css, `"http://www.w3.org/2000/svg"`, ""), regexp.MustCompile(`(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)},
		{"EventSource (it cannot send the token header)", "console.js", js, regexp.MustCompile(`new EventSource`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if m := tc.bad.FindString(tc.text); m != "" {
				t.Errorf("%s has %q", tc.file, m)
			}
		})
	}
}
