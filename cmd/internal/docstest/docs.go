package docstest

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DocFiles are the docs held to the code, relative to the module root.
func DocFiles(root string) ([]string, error) {
	var out []string
	for _, pat := range []string{"README.md", "docs/*.md", "docs/providers/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRead, err)
		}
		for _, p := range m {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrRead, err)
			}
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out, nil
}

// CiteAll reads the citations of the docs.
func CiteAll(root string, files []string) ([]Citation, error) {
	var out []Citation
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRead, err)
		}
		out = append(out, Cite(f, string(b))...)
	}
	return out, nil
}

// ModuleRoot is the directory above dir that holds go.mod.
func ModuleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: above %s", ErrNoModule, dir)
		}
	}
}

// ServeFlags are the flags of the flag set named "serve".
func (c *Code) ServeFlags() []string {
	var out []string
	for f, cmds := range c.Flags {
		if slices.Contains(cmds, "serve") {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// Tree lists the module's files and directories (slash-separated,
// relative to root; hidden ones, .native say, left out; a directory is
// there when a file is in it) and its top-level directories.
func Tree(root string) (tree, tops map[string]bool, err error) {
	tree, tops = map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		// A file and its directories: an empty directory a move left
		// behind is not there.
		for p := rel; p != "."; p = path.Dir(p) {
			tree[p] = true
			if !strings.Contains(p, "/") && p != rel {
				tops[p] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrRead, err)
	}
	return tree, tops, nil
}
