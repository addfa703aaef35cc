package admin

import (
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/lethe-privacy/lethe/admin/console"
)

// openAPIOperation is the part of an OpenAPI operation the test checks.
type openAPIOperation struct {
	Security []map[string][]string `yaml:"security"`
	Roles    []Role                `yaml:"x-lethe-roles"`
}

// openAPIRoutes reads docs/openapi.yaml into "METHOD /path" → operation.
func openAPIRoutes(t *testing.T) map[string]openAPIOperation {
	t.Helper()
	b, err := os.ReadFile("../docs/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(b, &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3.0"), "OpenAPI 3.0, got %q", doc.OpenAPI)
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}
	out := map[string]openAPIOperation{}
	for path, item := range doc.Paths {
		for key, node := range item {
			if !methods[key] {
				continue // parameters, summary…
			}
			var op openAPIOperation
			require.NoError(t, node.Decode(&op), "%s %s", key, path)
			out[strings.ToUpper(key)+" "+path] = op
		}
	}
	return out
}

func TestOpenAPI_MatchesRoutes(t *testing.T) {
	s, err := newServer(Config{Engine: cannedEngine(), Tokens: testTokens()})
	require.NoError(t, err)
	var walked []string
	require.NoError(t, chi.Walk(s.router(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, console.Prefix+"/") { // HTML pages, documented in docs/console.md
			walked = append(walked, method+" "+route)
		}
		return nil
	}))
	documented := openAPIRoutes(t)
	var paths []string
	for k := range documented {
		paths = append(paths, k)
	}
	sort.Strings(walked)
	sort.Strings(paths)
	// chi and OpenAPI both spell a path parameter {id}.
	assert.Equal(t, walked, paths, "docs/openapi.yaml and the router disagree")
}

func TestOpenAPI_DocumentsEachRoutesRoles(t *testing.T) {
	s, err := newServer(Config{Engine: cannedEngine(), Tokens: testTokens()})
	require.NoError(t, err)
	documented := openAPIRoutes(t)
	for _, rt := range s.routes() {
		key := rt.method + " " + rt.pattern
		op, ok := documented[key]
		if !assert.True(t, ok, "%s is not documented", key) {
			continue
		}
		assert.ElementsMatch(t, rt.roles, op.Roles, "%s: x-lethe-roles", key)
		if rt.roles == nil {
			assert.NotNil(t, op.Security, "%s needs no token: document it with security: []", key)
			assert.Empty(t, op.Security, "%s needs no token", key)
		} else {
			assert.Nil(t, op.Security, "%s: inherit the document's bearer security", key)
		}
	}
}
