package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Package is the part of `go list -json` that the checks use.
type Package struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// HasNonTestFiles reports whether the package has files other than tests.
func (p Package) HasNonTestFiles() bool {
	return len(p.GoFiles)+len(p.CgoFiles) > 0
}

// FindModuleRoot walks up from dir to the directory holding go.mod and
// returns it together with the module path declared there.
func FindModuleRoot(dir string) (root, modulePath string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			mp, err := parseModulePath(data)
			return dir, mp, err
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("archtest: no go.mod above the working directory")
		}
		dir = parent
	}
}

func parseModulePath(gomod []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`), nil
		}
	}
	return "", errors.New("archtest: go.mod has no module line")
}

// ListPackages runs `go list -e -json ./...` in the module root and decodes
// every package it reports.
func ListPackages(root string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-e",
		"-json=ImportPath,Dir,Name,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Imports,TestImports,XTestImports,Error",
		"./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	return DecodePackages(bytes.NewReader(out))
}

// DecodePackages decodes the stream of JSON objects that `go list -json` prints.
func DecodePackages(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decoding go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// CheckDocFile checks that the package has a doc.go file that belongs to it
// and whose package clause carries a non-empty doc comment. It returns one
// message per problem, naming the package; none when all is well. Packages
// with only test files are not checked.
func CheckDocFile(p Package) []string {
	if !p.HasNonTestFiles() {
		return nil
	}
	path := filepath.Join(p.Dir, "doc.go")
	if _, err := os.Stat(path); err != nil {
		return []string{fmt.Sprintf("%s: no doc.go (every package documents itself in doc.go)", p.ImportPath)}
	}
	if !slices.Contains(p.GoFiles, "doc.go") && !slices.Contains(p.CgoFiles, "doc.go") {
		return []string{fmt.Sprintf("%s: doc.go is not part of the package (build constraints?)", p.ImportPath)}
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return []string{fmt.Sprintf("%s: doc.go does not parse: %v", p.ImportPath, err)}
	}
	if f.Doc == nil || strings.TrimSpace(f.Doc.Text()) == "" {
		return []string{fmt.Sprintf("%s: doc.go has no package comment (// Package %s ...)", p.ImportPath, f.Name.Name)}
	}
	return nil
}

// Rule is one layering rule. Patterns are module-relative import paths; a
// pattern ending in "/..." matches that path and everything below it, any
// other pattern matches exactly one path, and "..." matches every package.
type Rule struct {
	// Name says what the rule is for; it is printed with each violation.
	Name string
	// Packages selects the packages the rule applies to.
	Packages string
	// Except removes packages from Packages.
	Except []string
	// Forbidden lists module packages the selected packages must not import.
	Forbidden []string
	// OnlyAllowed, when set, restricts the selected packages to importing
	// only the module packages that match Allowed (none if Allowed is empty).
	// Imports from outside the module are not restricted.
	OnlyAllowed bool
	Allowed     []string
	// Tests, when set, holds the package's tests to the rule too (their
	// TestImports and XTestImports), not only its non-test files.
	Tests bool
}

// Violation is one import that breaks a rule.
type Violation struct {
	Rule     string
	Importer string // module-relative
	Imported string // module-relative
	Reason   string
}

func (v Violation) String() string {
	return fmt.Sprintf("[%s] %s imports %s: %s", v.Rule, v.Importer, v.Imported, v.Reason)
}

// Match reports whether the module-relative path rel matches pattern.
func Match(pattern, rel string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func matchAny(patterns []string, rel string) (string, bool) {
	for _, p := range patterns {
		if Match(p, rel) {
			return p, true
		}
	}
	return "", false
}

// Rel returns the module-relative form of an import path and whether the
// path is inside the module at all. The module's root package is ".".
func Rel(modulePath, importPath string) (string, bool) {
	if importPath == modulePath {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, modulePath+"/")
	return rest, ok
}

// CheckRules applies every rule to every package's non-test imports (and
// its tests' too for a rule with Tests) and returns all violations, in
// package order.
func CheckRules(modulePath string, pkgs []Package, rules []Rule) []Violation {
	var out []Violation
	for _, p := range pkgs {
		from, ok := Rel(modulePath, p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range rules {
			imports := p.Imports
			if r.Tests {
				imports = slices.Concat(p.Imports, p.TestImports, p.XTestImports)
				slices.Sort(imports)
				imports = slices.Compact(imports)
			}
			out = append(out, CheckRule(modulePath, from, imports, r)...)
		}
	}
	return out
}

// CheckRule applies one rule to the imports of the package whose
// module-relative path is from.
func CheckRule(modulePath, from string, imports []string, r Rule) []Violation {
	if !Match(r.Packages, from) {
		return nil
	}
	if _, ok := matchAny(r.Except, from); ok {
		return nil
	}
	var out []Violation
	for _, imp := range imports {
		to, ok := Rel(modulePath, imp)
		if !ok {
			continue
		}
		if pat, bad := matchAny(r.Forbidden, to); bad {
			out = append(out, Violation{r.Name, from, to, "forbidden (" + pat + ")"})
			continue
		}
		if r.OnlyAllowed {
			if _, good := matchAny(r.Allowed, to); !good {
				reason := "not in the allowed list " + strings.Join(r.Allowed, ", ")
				if len(r.Allowed) == 0 {
					reason = "may import no package of the module"
				}
				out = append(out, Violation{r.Name, from, to, reason})
			}
		}
	}
	return out
}

// IsTestSupport reports whether the module-relative package rel exists to
// test the engine rather than to run it: its last path element ends in
// "test" (a helper) or "mock" (a server speaking a vendor's wire), or it
// matches one of roots (the simulator, the dev commands).
func IsTestSupport(rel string, roots []string) bool {
	last := rel[strings.LastIndex(rel, "/")+1:]
	if strings.HasSuffix(last, "test") || strings.HasSuffix(last, "mock") {
		return true
	}
	_, ok := matchAny(roots, rel)
	return ok
}

// CheckProductionImports reports every import by a production package (one
// that is not test support, see IsTestSupport) of the standard library's
// testing packages ("testing" and below) or of a test-support package of
// the module. Only non-test files count: a package's tests may use both.
func CheckProductionImports(modulePath string, pkgs []Package, roots []string) []Violation {
	const rule = "production-without-test-support"
	var out []Violation
	for _, p := range pkgs {
		from, ok := Rel(modulePath, p.ImportPath)
		if !ok || IsTestSupport(from, roots) {
			continue
		}
		for _, imp := range p.Imports {
			if imp == "testing" || strings.HasPrefix(imp, "testing/") {
				out = append(out, Violation{rule, from, imp, "production code imports the test driver"})
				continue
			}
			if to, ok := Rel(modulePath, imp); ok && IsTestSupport(to, roots) {
				out = append(out, Violation{rule, from, to, "production code imports test support"})
			}
		}
	}
	return out
}
