package certificate

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// endless is an input that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestNodeVerifier_StopsReadingAtTheLimit feeds node/verify.mjs a
// certificate followed by endless spaces: it must read no more than
// MaxSize+1 bytes and say oversized, from a named file and from "-".
// Reading the whole input first would never end (the test's deadline
// kills it, and it fails).
func TestNodeVerifier_StopsReadingAtTheLimit(t *testing.T) {
	node := nodeOrSkip(t)
	keys := filepath.Join(vectorsDir, "keys.json")
	for _, name := range []string{"/dev/stdin", "-"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			code, stdout, stderr := runNode(ctx, t, node, endless{}, keys, name)
			if ctx.Err() != nil {
				t.Fatal("node/verify.mjs was still reading an endless input after two minutes")
			}
			if code != 1 || !strings.HasPrefix(stdout, "verdict: oversized\n") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and verdict oversized", code, stdout, stderr)
			}
		})
	}
}

// TestVectors_NodeCommitments: node/commitment.mjs, which a data subject
// runs, makes each subject commitment of the vectors from the subject's
// exact bytes, as the Go code does.
func TestVectors_NodeCommitments(t *testing.T) {
	node := nodeOrSkip(t)
	m := readManifest(t)
	if len(m.SubjectCommitments) == 0 {
		t.Fatal("the manifest lists no subject commitments")
	}
	for _, v := range m.SubjectCommitments {
		out, err := exec.Command(node, "node/commitment.mjs", v.Secret, v.Subject).Output()
		if err != nil {
			t.Fatalf("subject %q: %v", v.Subject, err)
		}
		if got := strings.TrimSpace(string(out)); got != v.Commitment {
			t.Errorf("subject %q: node says %s, want %s", v.Subject, got, v.Commitment)
		}
	}
}
