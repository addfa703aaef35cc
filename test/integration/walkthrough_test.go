//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walkthroughs are the README's "### Try it:" sections, each with what
// one paste of it prints. The test pastes every one twice in a row into
// one shell, as a newcomer trying it again would: the second paste must
// work as the first did.
var walkthroughs = map[string][]string{
	"Pinecone, with the emulator": {
		"verdict: valid", // forget run
		"verdict: valid", // verify
		`"m2"`,           // the emulator's fetch: bob's record
	},
	"a write around the proxy, tagged from the WAL": {
		"n0", "n1", // ledger subject: both rows, the one from before the start included
		"slot lethe_demo",
		"dropped replication slot lethe_demo",
	},
	"PostgreSQL, end to end": {
		"verdict: valid", "verdict: valid", "verdict: valid", // forget run, Go, Node
		"bob|1",                       // the server holds bob's row only
		"m3",                          // the HNSW index answers bob's row only
		"forgotten (erasure request)", // an insert about alice refused
		"dropped replication slot try_pg",
	},
}

// walkthroughFailures are lines no walkthrough prints when it works.
var walkthroughFailures = regexp.MustCompile(`(?m)cannot start|command not found|No such file|connection refused|Usage:`)

// TestREADME_WalkthroughsPasteTwice runs each "### Try it:" section of the
// README twice in one bash, from the repository root, and checks each
// paste printed what the section says it prints and no failure.
func TestREADME_WalkthroughsPasteTwice(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	sections := tryItSections(string(readme))
	for name := range walkthroughs {
		require.Contains(t, sections, name, "the README has no section \"### Try it: %s\"", name)
	}
	for name := range sections {
		require.Contains(t, walkthroughs, name, "a README walkthrough this test does not check: add what it prints to walkthroughs")
	}
	for name, script := range sections {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", script+"\necho '--- pasted again ---'\n"+script)
			cmd.Dir = root
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			first, second, found := strings.Cut(string(out), "--- pasted again ---")
			require.True(t, found, "the first paste never finished:\n%s", out)
			for i, paste := range []string{first, second} {
				assert.NotRegexp(t, walkthroughFailures, paste, "paste %d", i+1)
				rest := paste
				for _, want := range walkthroughs[name] {
					_, after, ok := strings.Cut(rest, want)
					if !assert.True(t, ok, "paste %d does not print %q (in order):\n%s", i+1, want, paste) {
						break
					}
					rest = after
				}
			}
		})
	}
}

// tryItSections returns the shell blocks of each "### Try it: NAME"
// section of readme by NAME, the blocks of one section joined in order.
func tryItSections(readme string) map[string]string {
	sections := map[string]string{}
	var name string
	var inBlock bool
	var script strings.Builder
	flush := func() {
		if name != "" {
			sections[name] = script.String()
		}
		name = ""
		script.Reset()
	}
	for line := range strings.Lines(readme) {
		switch {
		case inBlock && strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock:
			script.WriteString(line)
		case strings.HasPrefix(line, "```sh") && name != "":
			inBlock = true
		case strings.HasPrefix(line, "#"):
			flush()
			if after, ok := strings.CutPrefix(line, "### Try it: "); ok {
				name = strings.TrimSpace(after)
			}
		}
	}
	flush()
	return sections
}
