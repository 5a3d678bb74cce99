package speechtest_test

import (
	"os"
	"slices"
	"testing"

	"github.com/brisvox/brisvox/internal/archtest"
)

// TestImportedOnlyByTests: no package of the module imports speechtest
// outside its tests (speechtest imports testing, whose flags and code a
// binary must not carry). Mutation caught: an import of speechtest added
// to a non-test file of an adapter.
func TestImportedOnlyByTests(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, modulePath, err := archtest.FindModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := archtest.ListPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	self := modulePath + "/providers/internal/speechtest"
	listed := false
	for _, p := range pkgs {
		listed = listed || p.ImportPath == self
		if slices.Contains(p.Imports, self) {
			t.Errorf("%s imports speechtest outside its tests", p.ImportPath)
		}
	}
	if !listed {
		t.Fatalf("go list did not report %s among %d packages", self, len(pkgs))
	}
}
