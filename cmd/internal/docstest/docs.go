package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
