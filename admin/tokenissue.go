package admin

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteNewToken shows a token NewToken made, as lethe-proxy admin-token
// prints it: the secret alone on stdout (so that it can be piped into a
// token file), and on stderr that its entry was added to tokensFile or,
// when tokensFile is empty, the entry to add by hand; the secret is shown
// this once.
func WriteNewToken(stdout, stderr io.Writer, secret string, entry Token, tokensFile string) {
	fmt.Fprintln(stdout, secret)
	if tokensFile != "" {
		fmt.Fprintf(stderr, "Added %s (%s) to %s; a running proxy accepts the token at its next request.\n", entry.Name, entry.Role, tokensFile)
	} else {
		b, _ := json.Marshal(entry) // plain strings: cannot fail
		fmt.Fprintf(stderr, "Add this entry to the \"tokens\" list of the admin tokens file (or pass --tokens-file FILE next time):\n%s\n", b)
	}
	fmt.Fprintf(stderr, "The token above is shown once; give it to %s (as LETHE_ADMIN_TOKEN or a --token-file).\n", entry.Name)
}
