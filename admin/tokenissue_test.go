package admin

import (
	"bytes"
	"testing"
)

// The secret alone on stdout; on stderr where its entry went, or the
// entry to add by hand, and that it is shown once.
func TestWriteNewToken_SecretOnStdoutAndWhereTheEntryGoes(t *testing.T) {
	entry := Token{Name: "house2-ops", Role: RoleOperator, SHA256: HashToken("s3cret")}
	for _, tc := range []struct {
		name, tokensFile, wantStderr string
	}{
		{"added to a tokens file", "/etc/lethe/tokens.json",
			"Added house2-ops (operator) to /etc/lethe/tokens.json; a running proxy accepts the token at its next request.\n" +
				"The token above is shown once; give it to house2-ops (as LETHE_ADMIN_TOKEN or a --token-file).\n"},
		{"entry to add by hand", "",
			"Add this entry to the \"tokens\" list of the admin tokens file (or pass --tokens-file FILE next time):\n" +
				`{"name":"house2-ops","role":"operator","sha256":"` + HashToken("s3cret") + `"}` + "\n" +
				"The token above is shown once; give it to house2-ops (as LETHE_ADMIN_TOKEN or a --token-file).\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			WriteNewToken(&stdout, &stderr, "s3cret", entry, tc.tokensFile)
			if stdout.String() != "s3cret\n" {
				t.Errorf("stdout %q, want the secret alone", stdout.String())
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr\n%q\nwant\n%q", stderr.String(), tc.wantStderr)
			}
		})
	}
}
