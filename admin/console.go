package admin

import (
	"context"
	"net/http"
	"strings"

	"github.com/lethe-privacy/lethe/admin/console"
)

// consoleHandler is the console's handler over the API's engine, tokens (read
// again as the API reads them), subject rules, error answers and access
// log.
func (s *server) consoleHandler() http.Handler {
	return console.New(console.Config{
		Engine: s.engine,
		Authenticate: func(token string) (console.Caller, bool) {
			c, ok := lookupSecret(s.tokens(), strings.TrimSpace(token))
			return console.Caller{Name: c.name, Operator: c.role == RoleOperator}, ok
		},
		CheckSubject: CheckSubject,
		Explain: func(err error) console.Refusal {
			a, known := mapError(err)
			return console.Refusal{Status: a.status, Message: a.body.Error, RequestID: a.body.RequestID, Known: known}
		},
		SetCaller: func(ctx context.Context, name string) { setTokenName(ctx, name) },
		Coverage:  s.survey,
		Logger:    s.log,
	})
}
