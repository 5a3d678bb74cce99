package docstest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Code is what the Go files of the module name.
type Code struct {
	// Names are the words the code knows: string literals and their
	// words, constants, identifiers, struct tag values, the C preamble
	// of cgo files; of every Go file, tests included.
	Names map[string]bool
	// NamePrefixes are the fixed starts of names built at run time
	// ("gate_" + name), of every Go file.
	NamePrefixes map[string]bool
	// Counters are the names counted (where: file:line of one site).
	Counters map[string]string
	// CounterPrefixes are the fixed starts of counted names built at
	// run time ("conn_" + k).
	CounterPrefixes map[string]string
	// Metrics are the Prometheus metrics registered.
	Metrics map[string]Metric
	// Decls are the names each package name of the module declares at
	// the top level (tests included), and Members the fields and
	// methods it declares.
	Decls, Members map[string]map[string]bool
	// Flags are the command-line flags defined: name -> the commands
	// (a flag set's name, or the package directory for package flags).
	Flags map[string][]string
}

// Metric is one registered metric.
type Metric struct {
	Where string
	// Labels are its variable labels; nil when the code does not spell
	// them out at the registration (a labels argument).
	Labels []string
}

// The Go code read for the counters, metrics and flags: what counts
// (a method Inc(name) or Add(name, n)), a map of counts
// (map[string]uint64), a Describe's Counters, a name table (counterNames)
// and the functions that name a counter (verdictCounter, statKey).
var (
	counterFuncRe = regexp.MustCompile(`(?i)(counter|statkey|countername)s?$`)
	flagMethods   = map[string]int{
		"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0, "Func": 0, "BoolFunc": 0,
		"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1, "DurationVar": 1, "TextVar": 1, "Var": 1,
	}
	wordsRe = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_]*`)
)

// ScanCode reads every Go file under root (the module; nested modules,
// testdata and hidden directories are left out). Of the directories skip
// names, relative to root, only the declarations are read: this
// package's own tests quote names that must not exist.
func ScanCode(root string, skip ...string) (*Code, error) {
	c := &Code{
		Names: map[string]bool{}, NamePrefixes: map[string]bool{}, Counters: map[string]string{}, CounterPrefixes: map[string]string{},
		Metrics: map[string]Metric{}, Flags: map[string][]string{},
		Decls: map[string]map[string]bool{}, Members: map[string]map[string]bool{},
	}
	s := &scan{root: root, code: c, fset: token.NewFileSet(), consts: map[string]map[string]string{}, byBase: map[string]map[string]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" ||
				exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(s.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrRead, err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		s.files = append(s.files, file{path: path, dir: filepath.Dir(path), f: f, test: strings.HasSuffix(path, "_test.go"),
			skipped: slices.Contains(skip, filepath.ToSlash(rel))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range s.files {
		s.collectConsts(f)
	}
	for _, f := range s.files {
		s.decls(f)
		if f.skipped {
			continue
		}
		s.names(f)
		if !f.test {
			s.facts(f)
		}
	}
	s.resolveCounterFuncs()
	return c, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

type file struct {
	path, dir string
	f         *ast.File
	test      bool
	// skipped: only its declarations are read.
	skipped bool
}

type scan struct {
	root   string
	code   *Code
	fset   *token.FileSet
	files  []file
	consts map[string]map[string]string // dir -> const -> value
	byBase map[string]map[string]string // package name -> const -> value
	// funcs whose results name a counter: dir -> func name.
	counterFuncs map[[2]string]bool
}

func (s *scan) where(p token.Pos) string {
	pos := s.fset.Position(p)
	rel, err := filepath.Rel(s.root, pos.Filename)
	if err != nil {
		rel = pos.Filename
	}
	return filepath.ToSlash(rel) + ":" + strconv.Itoa(pos.Line)
}

func (s *scan) collectConsts(f file) {
	for _, d := range f.f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if v, ok := lit(vs.Values[i]); ok {
					put(s.consts, f.dir, n.Name, v)
					put(s.byBase, f.f.Name.Name, n.Name, v)
				}
			}
		}
	}
}

func put(m map[string]map[string]string, k, name, v string) {
	if m[k] == nil {
		m[k] = map[string]string{}
	}
	m[k][name] = v
}

func lit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(b.Value)
	return v, err == nil
}

// str is the string value of e: a literal or a constant.
func (s *scan) str(dir string, e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return s.str(dir, e.X)
	case *ast.BasicLit:
		return lit(e)
	case *ast.Ident:
		v, ok := s.consts[dir][e.Name]
		return v, ok
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			v, ok := s.byBase[x.Name][e.Sel.Name]
			return v, ok
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := s.str(dir, e.X)
			b, ok2 := s.str(dir, e.Y)
			if ok1 && ok2 {
				return a + b, true
			}
		}
	}
	return "", false
}

// decls records the file's top-level names and its fields and methods
// under its package's name (an external test package under the package
// it tests).
func (s *scan) decls(f file) {
	pkg := strings.TrimSuffix(f.f.Name.Name, "_test")
	add := func(m map[string]map[string]bool, name string) {
		if m[pkg] == nil {
			m[pkg] = map[string]bool{}
		}
		m[pkg][name] = true
	}
	for _, d := range f.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				add(s.code.Members, d.Name.Name)
			} else {
				add(s.code.Decls, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					add(s.code.Decls, sp.Name.Name)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						add(s.code.Decls, n.Name)
					}
				}
			}
		}
	}
	ast.Inspect(f.f, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.StructType:
			for _, fl := range x.Fields.List {
				for _, n := range fl.Names {
					add(s.code.Members, n.Name)
				}
				if len(fl.Names) == 0 { // embedded: its type's name
					add(s.code.Members, typeName(fl.Type))
				}
			}
		case *ast.InterfaceType:
			for _, fl := range x.Methods.List {
				for _, n := range fl.Names {
					add(s.code.Members, n.Name)
				}
			}
		}
		return true
	})
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	}
	return ""
}

// names adds every word the file knows to Names.
func (s *scan) names(f file) {
	n := s.code.Names
	cgo := false
	for _, im := range f.f.Imports {
		if im.Path.Value == `"C"` {
			cgo = true
		}
	}
	if cgo {
		for _, cg := range f.f.Comments {
			for _, w := range wordsRe.FindAllString(cg.Text(), -1) {
				n[w] = true
			}
		}
	}
	ast.Inspect(f.f, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.Ident:
			n[x.Name] = true
		case *ast.BasicLit:
			if v, ok := lit(x); ok {
				n[v] = true
				// A sub-test's name as go test prints it.
				sub := strings.ReplaceAll(v, " ", "_")
				n[sub] = true
				for _, w := range wordsRe.FindAllString(v+" "+sub, -1) {
					n[w] = true
				}
			}
		case *ast.BinaryExpr:
			// A name built at run time from a fixed start: "gate_" + name.
			if v, ok := lit(x.X); ok && x.Op == token.ADD && strings.HasSuffix(v, "_") {
				s.code.NamePrefixes[v] = true
			}
		case *ast.Field:
			if x.Tag != nil {
				tag, _ := strconv.Unquote(x.Tag.Value)
				for _, key := range []string{"json", "toml", "yaml"} {
					if v, ok := reflect.StructTag(tag).Lookup(key); ok {
						n[strings.Split(v, ",")[0]] = true
					}
				}
			}
		}
		return true
	})
}

// facts reads the counters, metrics and flags of a non-test file.
func (s *scan) facts(f file) {
	for _, d := range f.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			if d.Name.Name == "counterNames" {
				s.allStrings(f, d.Body)
			}
			s.bodyWith(f, d.Body, returnsCounts(d.Type), s.flagSetParams(f, d.Type))
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				vs, ok := sp.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, n := range vs.Names {
					if i < len(vs.Values) && (n.Name == "counterNames" || isNameTable(n.Name, vs.Values[i])) {
						s.allStrings(f, vs.Values[i])
					}
				}
				for _, v := range vs.Values {
					s.body(f, v, false)
				}
			}
		}
	}
}

// isNameTable: a table of names indexed by constants,
// `var dropNames = [nDrops]string{dropLoop: "loop", ...}`, names the
// counters of the constants (an enum's String table is not keyed).
func isNameTable(name string, v ast.Expr) bool {
	cl, ok := v.(*ast.CompositeLit)
	if !ok || !strings.HasSuffix(name, "Names") || len(cl.Elts) == 0 {
		return false
	}
	if _, ok := cl.Type.(*ast.ArrayType); !ok {
		return false
	}
	_, keyed := cl.Elts[0].(*ast.KeyValueExpr)
	return keyed
}

// returnsCounts: a result of the function is a map[string]uint64, so a
// name it sets in one is a counter.
func returnsCounts(t *ast.FuncType) bool {
	if t.Results == nil {
		return false
	}
	for _, r := range t.Results.List {
		if isCountMap(r.Type) {
			return true
		}
	}
	return false
}

func isCountMap(e ast.Expr) bool {
	m, ok := e.(*ast.MapType)
	if !ok {
		return false
	}
	k, ok1 := m.Key.(*ast.Ident)
	v, ok2 := m.Value.(*ast.Ident)
	return ok1 && ok2 && k.Name == "string" && v.Name == "uint64"
}

func (s *scan) allStrings(f file, n ast.Node) {
	ast.Inspect(n, func(x ast.Node) bool {
		if b, ok := x.(*ast.BasicLit); ok {
			if v, ok := lit(b); ok {
				s.counter(v, s.where(b.Pos()))
			}
		}
		return true
	})
}

func (s *scan) counter(name, where string) {
	if _, ok := s.code.Counters[name]; !ok {
		s.code.Counters[name] = where
	}
}

// countKey records the counter a key expression names: a string, a
// fixed start joined to a run-time part, or a call of a function that
// names one.
func (s *scan) countKey(f file, e ast.Expr) {
	if v, ok := s.str(f.dir, e); ok {
		s.counter(v, s.where(e.Pos()))
		return
	}
	switch e := e.(type) {
	case *ast.BinaryExpr:
		if v, ok := s.str(f.dir, e.X); ok && e.Op == token.ADD {
			if _, ok := s.code.CounterPrefixes[v]; !ok {
				s.code.CounterPrefixes[v] = s.where(e.Pos())
			}
		}
	case *ast.CallExpr:
		var name string
		switch fn := e.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		if name != "" {
			if s.counterFuncs == nil {
				s.counterFuncs = map[[2]string]bool{}
			}
			s.counterFuncs[[2]string{f.dir, name}] = true
		}
	}
}

// flagSetParams names a function's *flag.FlagSet parameters: the flags
// it registers on them belong to whichever command passes its set in,
// which the syntax alone does not say, so they are the package's (as the
// global flag set's are).
func (s *scan) flagSetParams(f file, t *ast.FuncType) map[string]string {
	out := map[string]string{}
	if t.Params == nil {
		return out
	}
	for _, p := range t.Params.List {
		star, ok := p.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "FlagSet" {
			continue
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "flag" {
			continue
		}
		rel, _ := filepath.Rel(s.root, f.dir)
		for _, n := range p.Names {
			out[n.Name] = filepath.ToSlash(rel)
		}
	}
	return out
}

func (s *scan) body(f file, n ast.Node, counts bool) { s.bodyWith(f, n, counts, nil) }

func (s *scan) bodyWith(f file, n ast.Node, counts bool, params map[string]string) {
	flagSets := map[string]string{} // variable -> flag set name
	maps.Copy(flagSets, params)
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.AssignStmt:
			for i, l := range x.Lhs {
				if ix, ok := l.(*ast.IndexExpr); ok && (counts || isCountersField(ix.X)) {
					s.countKey(f, ix.Index)
				}
				if i < len(x.Rhs) {
					if id, ok := l.(*ast.Ident); ok {
						if name, ok := s.newFlagSet(f, x.Rhs[i]); ok {
							flagSets[id.Name] = name
						}
					}
				}
			}
		case *ast.IncDecStmt:
			if ix, ok := x.X.(*ast.IndexExpr); ok && (counts || isCountersField(ix.X)) {
				s.countKey(f, ix.Index)
			}
		case *ast.CompositeLit:
			if isCountMap(x.Type) {
				for _, el := range x.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						s.countKey(f, kv.Key)
					}
				}
			}
		case *ast.CallExpr:
			s.call(f, x, flagSets)
		}
		return true
	})
}

func isCountersField(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Counters"
}

func (s *scan) newFlagSet(f file, e ast.Expr) (string, bool) {
	c, ok := e.(*ast.CallExpr)
	if !ok || len(c.Args) == 0 {
		return "", false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "NewFlagSet" {
		return "", false
	}
	if name, ok := s.str(f.dir, c.Args[0]); ok {
		return name, true
	}
	// A set named at run time (a subcommand's): the package's.
	rel, _ := filepath.Rel(s.root, f.dir)
	return filepath.ToSlash(rel), true
}

func (s *scan) call(f file, c *ast.CallExpr, flagSets map[string]string) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	m := sel.Sel.Name
	switch {
	case m == "Inc" && len(c.Args) == 1, m == "Add" && len(c.Args) == 2, (m == "count" || m == "Count") && len(c.Args) == 1:
		if _, isStr := s.str(f.dir, c.Args[0]); isStr || isKeyExpr(c.Args[0]) {
			s.countKey(f, c.Args[0])
		}
	case m == "NewDesc" && len(c.Args) >= 3:
		if name, ok := s.str(f.dir, c.Args[0]); ok {
			s.metric(name, s.where(c.Pos()), s.strings(f, c.Args[2]))
		}
	case (m == "GaugeFunc" || m == "CounterFunc") && len(c.Args) >= 1:
		if name, ok := s.str(f.dir, c.Args[0]); ok && strings.HasPrefix(name, "brisvox_") {
			s.metric(name, s.where(c.Pos()), nil)
		}
	case strings.HasPrefix(m, "New") && len(c.Args) >= 1:
		if name, ok := s.optsName(f, c.Args[0]); ok {
			var labels []string
			if strings.HasSuffix(m, "Vec") && len(c.Args) >= 2 {
				labels = s.strings(f, c.Args[1])
			} else {
				labels = []string{}
			}
			s.metric(name, s.where(c.Pos()), labels)
		}
	}
	if i, ok := flagMethods[m]; ok && i < len(c.Args) && strings.Contains(f.path, string(filepath.Separator)+"cmd"+string(filepath.Separator)) {
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return
		}
		cmd, known := flagSets[x.Name]
		if !known && x.Name != "flag" {
			return
		}
		if !known {
			rel, _ := filepath.Rel(s.root, f.dir)
			cmd = filepath.ToSlash(rel)
		}
		if name, ok := s.str(f.dir, c.Args[i]); ok {
			s.code.Flags[name] = append(s.code.Flags[name], cmd)
		}
	}
}

// isKeyExpr: a run-time counter name (a fixed start joined to a part, or
// a call naming one), as opposed to a number added.
func isKeyExpr(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BinaryExpr:
		_, ok := e.X.(*ast.BasicLit)
		return ok && e.Op == token.ADD
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok {
			return counterFuncRe.MatchString(id.Name)
		}
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			return counterFuncRe.MatchString(sel.Sel.Name)
		}
	}
	return false
}

// optsName is the Name of a prometheus.XxxOpts literal.
func (s *scan) optsName(f file, e ast.Expr) (string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	t, ok := cl.Type.(*ast.SelectorExpr)
	if !ok || !strings.HasSuffix(t.Sel.Name, "Opts") {
		return "", false
	}
	for _, el := range cl.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
				return s.str(f.dir, kv.Value)
			}
		}
	}
	return "", false
}

// strings are the strings of a []string literal; nil when e is not one.
func (s *scan) strings(f file, e ast.Expr) []string {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
			return []string{}
		}
		return nil
	}
	out := []string{}
	for _, el := range cl.Elts {
		if v, ok := s.str(f.dir, el); ok {
			out = append(out, v)
		}
	}
	return out
}

func (s *scan) metric(name, where string, labels []string) {
	if _, ok := s.code.Metrics[name]; !ok {
		s.code.Metrics[name] = Metric{Where: where, Labels: labels}
	}
}

// resolveCounterFuncs reads the functions whose results name a counter
// (verdictCounter, statKey): each string they return is one, each fixed
// start joined to a part a prefix.
func (s *scan) resolveCounterFuncs() {
	for _, f := range s.files {
		if f.test {
			continue
		}
		for _, d := range f.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !s.counterFuncs[[2]string{f.dir, fd.Name.Name}] {
				continue
			}
			ast.Inspect(fd.Body, func(x ast.Node) bool {
				if r, ok := x.(*ast.ReturnStmt); ok {
					for _, e := range r.Results {
						s.countKey(f, e)
					}
				}
				return true
			})
		}
	}
}
