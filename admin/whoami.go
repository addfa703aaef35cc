package admin

import "net/http"

// Caller is who a bearer token belongs to: its name in the tokens file
// and its role. A client that offers different actions to each role (the
// MCP server) asks for it rather than guessing from refusals.
type Caller struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// whoami answers with the caller the request's token belongs to; authorize
// has already refused a missing or unknown token.
func (s *server) whoami(w http.ResponseWriter, r *http.Request) {
	c, _ := lookup(s.tokens(), r)
	writeJSON(w, http.StatusOK, Caller{Name: c.name, Role: c.role})
}
