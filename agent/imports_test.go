package agent

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package pure: the standard library, messages, its
// own JSON lexer (agent/jsonlex) and the JSON Schema validator that tool
// arguments are checked with (and the x/text printer of its messages), so
// the domain never drags in a provider, an actor or a transport. Catches an
// import added for convenience (a logger, a second schema library).
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	sawDoc := false
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if name == "doc.go" && f.Doc != nil {
			sawDoc = true
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !allowedImport(path) && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: agent may import only the standard library, messages and the JSON Schema validator", name, path)
			}
		}
	}
	if !sawDoc {
		t.Error("doc.go with a package comment is missing")
	}
}

// allowedImport lists the non-standard imports of the package.
func allowedImport(path string) bool {
	switch {
	case path == "github.com/brisvox/brisvox/messages":
		return true
	case path == "github.com/brisvox/brisvox/agent/jsonlex": // the JSON lexer it shares with the providers
		return true
	case path == "github.com/santhosh-tekuri/jsonschema/v6" || strings.HasPrefix(path, "github.com/santhosh-tekuri/jsonschema/v6/"):
		return true
	case path == "golang.org/x/text/language" || path == "golang.org/x/text/message":
		return true
	}
	return false
}
