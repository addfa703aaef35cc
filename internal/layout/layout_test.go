package layout

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeLayout_NamesEveryPackageDirectoryAndNoOther holds README.md's
// Layout section to the module's directories.
func TestReadmeLayout_NamesEveryPackageDirectoryAndNoOther(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatalf("read the README: %v", err)
	}
	for _, p := range layoutProblems(os.DirFS(root), string(readme)) {
		t.Error(p)
	}
}

// TestLayoutProblems_ReportsMissingRowsAndRowsWithoutDirectory checks the
// check itself on a made-up module, so that a check that finds nothing
// cannot pass unnoticed.
func TestLayoutProblems_ReportsMissingRowsAndRowsWithoutDirectory(t *testing.T) {
	module := fsWith(
		"go.mod",
		"cmd/tool/main.go",
		"core/core.go",
		"core/core_test.go",
		"onlytests/x_test.go",
		"core/testdata/fixture.go",
		"web/node_modules/pkg/x.go",
		"scripts/run.sh",
		".hidden/x.go",
	)
	readme := "# M\n\n## Layout\n\n| path | what |\n|---|---|\n" +
		"| `cmd/tool` | the command |\n" +
		"| `scripts` | shell scripts |\n" +
		"| `gone` | moved away |\n" +
		"\n## After\n\n| `core` | outside the section: does not count |\n"
	got := layoutProblems(module, readme)
	want := []string{
		"README.md's Layout section has no row for core, a package directory: add | `core` | what it owns | under its wing",
		"README.md's Layout section names gone, which is not a directory of the module: remove its row or correct the path",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	readme = "# M\n\n## Other\n"
	got = layoutProblems(module, readme)
	if len(got) != 1 || !strings.Contains(got[0], `no "## Layout" section`) {
		t.Errorf("a README without the section: %q", got)
	}
}

// layoutProblems returns, sorted, what is wrong between the README's
// Layout section and the package directories of the module in fsys.
func layoutProblems(fsys fs.FS, readme string) []string {
	rows, ok := layoutRows(readme)
	if !ok {
		return []string{`README.md has no "## Layout" section: add it with a table row per package directory`}
	}
	dirs, err := packageDirs(fsys)
	if err != nil {
		return []string{fmt.Sprintf("list the module's package directories: %v", err)}
	}
	var problems []string
	named := map[string]bool{}
	for _, r := range rows {
		if named[r] {
			problems = append(problems, fmt.Sprintf("README.md's Layout section names %s twice: keep one row", r))
		}
		named[r] = true
		if info, err := fs.Stat(fsys, r); err != nil || !info.IsDir() {
			problems = append(problems, fmt.Sprintf("README.md's Layout section names %s, which is not a directory of the module: remove its row or correct the path", r))
		}
	}
	for _, d := range dirs {
		if !named[d] {
			problems = append(problems, fmt.Sprintf("README.md's Layout section has no row for %s, a package directory: add | `%s` | what it owns | under its wing", d, d))
		}
	}
	slices.Sort(problems)
	return problems
}

// layoutRows returns the paths in the first cell of the table rows of the
// README's "## Layout" section (up to the next level-two heading), as in
// "| `proxy/pgwire` | ... |"; ok is false when there is no such section.
func layoutRows(readme string) (paths []string, ok bool) {
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Layout"
			ok = ok || in
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		paths = append(paths, strings.TrimSuffix(cell, "/"))
	}
	return paths, ok
}

// packageDirs returns, sorted and slash-separated, the directories of fsys
// that hold a non-test .go file, skipping what the go command skips
// (testdata, names starting with . or _, nested modules) and node_modules.
func packageDirs(fsys fs.FS) ([]string, error) {
	seen := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == "." {
				return nil
			}
			if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return fs.SkipDir
			}
			if _, err := fs.Stat(fsys, p+"/go.mod"); err == nil {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			seen[filepath.ToSlash(filepath.Dir(p))] = true
		}
		return nil
	})
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs, err
}

// moduleRoot is the directory holding the go.mod above the test's
// working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("look for go.mod in %s: %v", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory: run the test inside the module")
		}
		dir = parent
	}
}
