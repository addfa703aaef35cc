package translog_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/lethe-privacy/lethe/translog"
)

// Seeds beyond these live in testdata/fuzz/<FuzzName>; they are signed
// with logKey, which is deterministic, so that the fuzzer starts from
// notes whose signatures verify and can reach the body parser.

func FuzzParseCheckpoint(f *testing.F) {
	f.Add(signText(f, logKey, testOrigin+"\n5\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"))
	f.Add(signText(f, logKey, testOrigin+"\n0\n"+emptyRootB64+"\n"))
	f.Add([]byte("not a note"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := translog.ParseCheckpoint(data, verifiers)
		if err != nil {
			return
		}
		// Whatever parses is signed by the origin's key and starts with
		// the three lines of the body in their one text form (extension
		// lines may follow).
		body := fmt.Sprintf("%s\n%d\n%s\n", cp.Origin, cp.Size, cp.Root)
		if !bytes.HasPrefix(data, []byte(body)) || cp.Origin != testOrigin || cp.Size < 0 {
			t.Fatalf("parsed %q into %+v", data, cp)
		}
		if !bytes.Equal(cp.Note, data) {
			t.Fatalf("Note is not the input verbatim")
		}
	})
}
