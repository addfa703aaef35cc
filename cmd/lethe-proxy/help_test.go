package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subcommandsOf lists the sub-subcommands each command takes, so that
// --help is tried after each of them too.
var subcommandsOf = map[string][]string{
	"forget": {"run", "list", "preview", "confirm", "status", "certificate", "reverify", "lift"},
	"ledger": {"counts", "subject"},
	"wal":    {"status", "drop"},
	"log":    {"checkpoint", "verify"},
	"mcp":    {"ref", "open"},
}

func TestHelp_EveryCommandAndSubcommandPrintsItsUsageAndExitsZero(t *testing.T) {
	for name := range commands {
		invocations := [][]string{{name}}
		for _, sub := range subcommandsOf[name] {
			invocations = append(invocations, []string{name, sub})
		}
		for _, inv := range invocations {
			for _, flag := range []string{"--help", "-h", "-help"} {
				args := append(slices.Clone(inv), flag)
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					var out, errOut bytes.Buffer
					code := run(args, strings.NewReader(""), &out, &errOut)
					assert.Equal(t, 0, code)
					assert.Equal(t, usageOf(name), out.String(), "the usage goes to stdout")
					assert.Empty(t, errOut.String())
				})
			}
		}
		t.Run("help "+name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, 0, run([]string{"help", name}, nil, &out, &errOut))
			assert.Equal(t, usageOf(name), out.String())
		})
	}
}

func TestHelp_AfterDoubleDashIsAnArgument(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"verify", "--", "--help"}, nil, &out, &errOut))
	assert.Empty(t, out.String())
}

func TestHelp_TopLevelListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(args, nil, &out, &errOut), args)
		for name := range commands {
			assert.Contains(t, out.String(), "\n  lethe-proxy "+name+" ", "%v: command %s", args, name)
		}
		for _, sub := range subcommandsOf["forget"] {
			assert.Contains(t, out.String(), sub, "forget %s", sub)
		}
	}
}

// TestHelp_TopLevelListsEveryEnvironmentVariable finds every LETHE_*
// variable named in the module's code (outside tests, benchmarks and the
// integration suite) and wants it in the top-level help.
func TestHelp_TopLevelListsEveryEnvironmentVariable(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	name := regexp.MustCompile(`"(LETHE_[A-Z0-9_]+)"`)
	found := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "bench" || rel == "test" || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(b), -1) {
			found[m[1]] = rel
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, found, "LETHE_ADMIN_TOKEN", "the scan should find the admin client's variables")
	for v, file := range found {
		assert.Contains(t, usage, "\n  "+v+" ", "%s (named in %s) is missing from the top-level help's Environment", v, file)
	}
}

func TestUsage_FilesNameTheAdminAPIsDefaultURLWithNoPlaceholderLeft(t *testing.T) {
	texts := map[string]string{"lethe-proxy": usage}
	for name := range commands {
		texts[name] = usageOf(name)
	}
	for name, text := range texts {
		assert.NotContains(t, text, "{{", "usage/%s.txt", name)
	}
	for _, text := range []string{usage, usageOf("forget"), usageOf("log"), usageOf("mcp")} {
		assert.Contains(t, text, adminclient.DefaultURL)
	}
}
