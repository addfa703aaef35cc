//go:build integration

package integration

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// commandRun is one run of a command: what it printed and its exit status.
type commandRun struct {
	stdout, stderr string
	code           int
}

// runCommand runs cmd to its end. An exit status other than 0 is the
// run's code; any other failure to run it fails the test.
func runCommand(t *testing.T, cmd *exec.Cmd) commandRun {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := commandRun{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}
