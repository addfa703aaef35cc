package certificate

import (
	"github.com/lethe-privacy/lethe/translog"

	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func TestOpenCheckpoint_ReadsASignedCheckpoint(t *testing.T) {
	f := newFixture(t)
	c := translog.Checkpoint{Origin: testOrigin, Size: 12, Root: tlog.RecordHash([]byte("x"))}
	signed := signCheckpoint(t, f.op, c)
	if !strings.HasPrefix(signed, testOrigin+"\n12\n") || !strings.Contains(signed, "\n\n— "+testOrigin+" ") {
		t.Errorf("not a C2SP signed checkpoint:\n%s", signed)
	}
	got, err := OpenCheckpoint([]byte(signed), f.keys)
	if err != nil {
		t.Fatal(err)
	}
	if got.Origin != c.Origin || got.Size != c.Size || got.Root != c.Root || string(got.Note) != signed {
		t.Errorf("opened %+v, want %+v with the signed note verbatim", got, c)
	}
}

func TestOpenCheckpoint_RefusesBadCheckpoints(t *testing.T) {
	f := newFixture(t)
	sign := func(text string) string {
		// Sign arbitrary note text the way a log signs its checkpoints.
		origin, _, _ := strings.Cut(text, "\n")
		msg, err := signNote(f.op, origin, text)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	root := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	for _, tc := range []struct{ name, signed, want string }{
		{"one line", testOrigin, "signature block"},
		{"unsigned", testOrigin + "\n1\n" + root + "\n", "signature block"},
		{"another log's origin", sign("log.lethe.example/staging\n1\n" + root + "\n"), "trusted keys are for log"},
		{"blank extension line", sign(testOrigin + "\n1\n" + root + "\n\nx\n"), "blank extension line"},
		{"empty tree with a root", sign(testOrigin + "\n0\n" + "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=" + "\n"), "empty tree"},
		{"size with a leading zero", sign(testOrigin + "\n01\n" + root + "\n"), "decimal"},
		{"negative size", sign(testOrigin + "\n-1\n" + root + "\n"), "decimal"},
		{"short root", sign(testOrigin + "\n1\nAAAA\n"), "root hash"},
		{"no root line", sign(testOrigin + "\n1\n"), "needs"},
		{"origin with a space", "log one\n1\n" + root + "\n\n— log one AAAA\n", "signature line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenCheckpoint([]byte(tc.signed), f.keys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestOpenCheckpoint_IgnoresExtensionLinesAndOtherSigners(t *testing.T) {
	f := newFixture(t)
	root := "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	text := testOrigin + "\n0\n" + root + "\nextension line\n"
	signed, err := signNote(f.op, testOrigin, text)
	if err != nil {
		t.Fatal(err)
	}
	witness, err := signNote(f.attacker, "witness.example", text)
	if err != nil {
		t.Fatal(err)
	}
	cosigned := signed + witness[len(text)+1:]
	if _, err := OpenCheckpoint([]byte(cosigned), f.keys); err != nil {
		t.Fatalf("extension line or a witness's cosignature refused: %v\n%s", err, cosigned)
	}
}

// signCheckpoint returns c as a C2SP signed note (c2sp.org/tlog-checkpoint)
// signed by s under the name c.Origin, as the transparency log signs its
// checkpoints.
func signCheckpoint(t testing.TB, s *Signer, c translog.Checkpoint) string {
	t.Helper()
	text := c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
	signed, err := signNote(s, c.Origin, text)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// signNote signs any note text with s under name, including checkpoints
// no log would write.
func signNote(s *Signer, name, text string) (string, error) {
	msg, err := note.Sign(&note.Note{Text: text}, noteSigner{name: name, key: s.key})
	return string(msg), err
}
