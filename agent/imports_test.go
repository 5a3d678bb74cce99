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

// TestImports keeps the package pure: the standard library and messages
// only, so the domain never drags in a provider, an actor or a transport.
// Catches an import added for convenience (a logger, a JSON schema library).
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
			if path != "github.com/brisvox/brisvox/messages" && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: agent may import only the standard library and messages", name, path)
			}
		}
	}
	if !sawDoc {
		t.Error("doc.go with a package comment is missing")
	}
}
