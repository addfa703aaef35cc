package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForgetList_PrintsATableOfRequestsWithOverdueFlags(t *testing.T) {
	env := newCLIEnv(t)
	code, stdout, stderr := env.run("", "forget", "list")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Equal(t, []string{"List status= overdue=false limit=0"}, env.engine.recorded())
	assert.Equal(t, ""+
		"REQUEST                           STATUS     RECEIVED              DEADLINE              OVERDUE\n"+
		cliRequestID+"  received   2025-03-01T12:00:00Z  2025-03-31T12:00:00Z  yes\n"+
		"req-done                          completed  2025-03-01T11:00:00Z  2025-03-31T11:00:00Z  no\n", stdout)
	assert.Contains(t, stderr, "1 shown request(s) are past their deadline")
	assert.NotContains(t, stderr, "More requests match")
}

func TestForgetList_PassesTheFilterAndSaysWhenThereAreMore(t *testing.T) {
	env := newCLIEnv(t)
	code, stdout, stderr := env.run("", "forget", "list", "--overdue", "--status", "received", "--limit", "2", "--json")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Equal(t, []string{"List status=received overdue=true limit=2"}, env.engine.recorded())
	assert.Contains(t, stdout, `"more": true`, "--json prints the API's answer")
	assert.Contains(t, stdout, `"request_id": "`+cliRequestID+`"`)

	code, _, stderr = env.run("", "forget", "list", "--limit", "2")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Contains(t, stderr, "More requests match than shown; raise --limit")
}

func TestForgetList_RefusesABadFilterBeforeCallingTheAPI(t *testing.T) {
	for _, args := range [][]string{
		{"forget", "list", "--status", "done"},
		{"forget", "list", "--status", "completed", "--overdue"},
		{"forget", "list", "--limit", "1001"},
		{"forget", "list", "--limit", "-1"},
		{"forget", "list", "alice@example.com"},
	} {
		env := newCLIEnv(t)
		code, stdout, stderr := env.run("", args...)
		assert.Equal(t, 2, code, "%v: stderr %s", args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "lethe-proxy forget list: ")
		assert.NotContains(t, stderr, "alice@example.com", "an argument is not quoted back: it may be a subject")
		assert.Empty(t, env.engine.recorded(), "%v", args)
	}
}
