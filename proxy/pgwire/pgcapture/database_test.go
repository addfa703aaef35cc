package pgcapture

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

func TestObserver_OpenObservesOnlyTheConfiguredDatabase(t *testing.T) {
	rules, err := extract.NewRules([]extract.Rule{{Table: "public.notes", ID: "id", Subjects: []extract.Subject{{Column: "user_id"}}}})
	require.NoError(t, err)
	core := capture.New(capture.Config{Rules: rules})
	defer core.Close()
	c := New(core, Config{Database: "app"})
	for name, tc := range map[string]struct {
		info     pgwire.SessionInfo
		observed bool
	}{
		"the configured database":         {pgwire.SessionInfo{User: "alice", Database: "app"}, true},
		"another database":                {pgwire.SessionInfo{User: "alice", Database: "other"}, false},
		"names differ only in case":       {pgwire.SessionInfo{User: "alice", Database: "App"}, false},
		"no database: the user's name":    {pgwire.SessionInfo{User: "app"}, true},
		"no database, another user's":     {pgwire.SessionInfo{User: "alice"}, false},
		"an empty database: the user's":   {pgwire.SessionInfo{User: "app", Database: ""}, true},
		"the user is named like the rule": {pgwire.SessionInfo{User: "app", Database: "other"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := c.Open(tc.info)
			if !tc.observed {
				assert.Nil(t, s, "an untyped nil: the relay passes the session untouched")
				return
			}
			require.NotNil(t, s)
			s.Close()
		})
	}

	all := New(core, Config{})
	s := all.Open(pgwire.SessionInfo{User: "alice", Database: "other"})
	require.NotNil(t, s, "no database configured: every session is observed")
	s.Close()
}
