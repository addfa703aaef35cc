package admin

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhoami_NamesTheTokensHolderAndRole(t *testing.T) {
	h := newHarness(t, cannedEngine())
	for token, want := range map[string]Caller{
		operatorToken: {Name: "ops-1", Role: RoleOperator},
		auditorToken:  {Name: "audit-1", Role: RoleAuditor},
	} {
		w := h.do("GET", "/v1/whoami", token, "")
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var got Caller
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
		assert.Equal(t, want, got)
	}
	assert.Empty(t, h.engine.Calls(), "whoami needs no engine")
}
