package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call calls tool with args and decodes its structured result into out
// (when not nil); it returns the result.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	if out != nil {
		require.False(t, res.IsError, "%s: %s", tool, resultText(res))
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out))
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func TestTools_OperatorPreviewsForgetsByReferenceAndVerifiesTheCertificate(t *testing.T) {
	r := newAPIRig(t)
	cs := r.session(t, r.OperatorToken)
	assert.Equal(t, []string{"certificate", "coverage", "forget", "preview", "reverify", "status", "verify"}, toolNames(t, cs))

	var pv PreviewResult
	call(t, cs, "preview", map[string]any{"subject": alice}, &pv)
	require.Len(t, pv.Layers, 1)
	assert.Equal(t, 2, pv.Layers[0].Rows)
	assert.False(t, pv.NothingFound)
	require.True(t, strings.HasPrefix(pv.SubjectRef, KindSubject), pv.SubjectRef)
	assert.NotContains(t, pv.SubjectRef, "alice")

	// From here on the person is named by reference only.
	var again PreviewResult
	call(t, cs, "preview", map[string]any{"subject_ref": pv.SubjectRef}, &again)
	assert.Equal(t, 2, again.Layers[0].Rows, "the reference names the same person")

	var receipt ForgetResult
	call(t, cs, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": again.Token}, &receipt)
	require.NotEmpty(t, receipt.RequestID)
	secret, err := r.Config.References.Open(KindSecret, receipt.SubjectSecretRef)
	require.NoError(t, err, "the subject secret is sealed for an operator to open")
	assert.Len(t, secret, 64)
	assert.NotContains(t, resultJSON(t, receipt), secret)
	r.Engine.Wait()

	var retried ForgetResult
	call(t, cs, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": again.Token}, &retried)
	assert.Equal(t, receipt.RequestID, retried.RequestID, "the same confirm token is the same forget")
	assert.True(t, retried.AlreadyStarted)

	var st struct {
		Status string `json:"status"`
	}
	call(t, cs, "status", map[string]any{"request_id": receipt.RequestID}, &st)
	assert.Equal(t, "completed", st.Status)

	cert := call(t, cs, "certificate", map[string]any{"request_id": receipt.RequestID}, nil)
	require.False(t, cert.IsError, resultText(cert))
	var v VerifyResult
	call(t, cs, "verify", map[string]any{"certificate": resultText(cert)}, &v)
	assert.True(t, v.Valid, v.Report)
	assert.Equal(t, "valid", v.Verdict)
	call(t, cs, "verify", map[string]any{"request_id": receipt.RequestID}, &v)
	assert.True(t, v.Valid, v.Report)

	var envelope map[string]any
	require.NoError(t, json.Unmarshal([]byte(resultText(cert)), &envelope))
	envelope["payload_sha256"] = strings.Repeat("0", 64)
	call(t, cs, "verify", map[string]any{"certificate": resultJSON(t, envelope)}, &v)
	assert.False(t, v.Valid)
	assert.Equal(t, "payload_tampered", v.Verdict, v.Report)

	var rv map[string]any
	call(t, cs, "reverify", map[string]any{"request_id": receipt.RequestID, "subject_ref": pv.SubjectRef}, &rv)
	assert.NotEmpty(t, rv)
}

func resultJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestTools_ForgetIsAnnotatedDestructiveAndIdempotent(t *testing.T) {
	r := newAPIRig(t)
	cs := r.session(t, r.OperatorToken)
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		tools[tool.Name] = tool
	}
	forget := tools["forget"].Annotations
	require.NotNil(t, forget)
	assert.False(t, forget.ReadOnlyHint)
	require.NotNil(t, forget.DestructiveHint)
	assert.True(t, *forget.DestructiveHint)
	assert.True(t, forget.IdempotentHint)
	for _, name := range []string{"preview", "status", "certificate", "verify"} {
		assert.True(t, tools[name].Annotations.ReadOnlyHint, name)
	}
	assert.ElementsMatch(t, []string{"subject_ref", "confirm_token"}, schemaRequired(t, tools["forget"]), "forget needs the preview's reference and token")
}

func schemaRequired(t *testing.T, tool *mcp.Tool) []string {
	b, err := json.Marshal(tool.InputSchema)
	require.NoError(t, err)
	var s struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(b, &s))
	return s.Required
}

func TestTools_AuditorTokenIsOfferedReadOnlyToolsOnly(t *testing.T) {
	r := newAPIRig(t)
	cs := r.session(t, r.Auditor)
	assert.Equal(t, []string{"certificate", "coverage", "status", "verify"}, toolNames(t, cs))
	for _, tool := range []string{"forget", "preview"} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"subject": alice, "subject_ref": "x", "confirm_token": "x"}})
		require.Error(t, err, tool)
		assert.Contains(t, err.Error(), "unknown tool")
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: CheckpointURI})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.True(t, strings.HasPrefix(res.Contents[0].Text, "test.lethe/log\n"), res.Contents[0].Text)
}

func TestTools_SubjectNeverInToolLogsOrErrors(t *testing.T) {
	r := newAPIRig(t)
	cs := r.session(t, r.OperatorToken)
	var pv PreviewResult
	call(t, cs, "preview", map[string]any{"subject": alice}, &pv)
	bad := call(t, cs, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": "not-a-token"}, nil)
	require.True(t, bad.IsError)
	call(t, cs, "forget", map[string]any{"subject_ref": pv.SubjectRef, "confirm_token": pv.Token}, &ForgetResult{})
	r.Engine.Wait()
	for _, text := range []string{r.Log.String(), resultText(bad)} {
		assert.NotContains(t, text, "alice")
	}
	logs := r.Log.String()
	assert.Contains(t, logs, "tool=preview caller=agent-ops")
	assert.Contains(t, logs, "tool=forget caller=agent-ops")
	assert.Contains(t, logs, "outcome=refused status=400 code=token_malformed")
	assert.NotContains(t, logs, pv.SubjectRef, "not even the reference is logged")
}

func TestTools_BadArgumentsGetAnErrorNamingTheFix(t *testing.T) {
	r := newAPIRig(t)
	cs := r.session(t, r.OperatorToken)
	other, err := NewReferences([]byte(strings.Repeat("k", 32)), 0)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		tool string
		args map[string]any
		want string
	}{
		"no person":           {"preview", map[string]any{}, "give subject_ref (preferred) or subject"},
		"both":                {"preview", map[string]any{"subject": alice, "subject_ref": "lsubj_x"}, "not both"},
		"not a reference":     {"preview", map[string]any{"subject_ref": alice}, `does not start with "lsubj_"`},
		"another key's":       {"forget", map[string]any{"subject_ref": other.Seal(KindSubject, alice), "confirm_token": "t"}, "same --ref-key-file"},
		"a secret, not a ref": {"forget", map[string]any{"subject_ref": r.Config.References.Seal(KindSecret, "s"), "confirm_token": "t"}, `does not start with "lsubj_"`},
		"empty token":         {"forget", map[string]any{"subject_ref": r.Config.References.Seal(KindSubject, alice), "confirm_token": " "}, "call preview first"},
		"unknown request":     {"status", map[string]any{"request_id": "0123456789abcdef0123456789abcdef"}, "no forget request has this id"},
		"verify: nothing":     {"verify", map[string]any{}, "give request_id"},
	} {
		t.Run(name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args, nil)
			require.True(t, res.IsError)
			assert.Contains(t, resultText(res), tc.want)
			assert.NotContains(t, resultText(res), "alice")
		})
	}
}

func TestTools_VerifyWithoutPinnedKeysSaysHowToPinThem(t *testing.T) {
	r := newAPIRig(t)
	r.Config.Keys = nil
	cs := r.session(t, r.Auditor)
	res := call(t, cs, "verify", map[string]any{"certificate": "{}"}, nil)
	require.True(t, res.IsError)
	assert.Contains(t, resultText(res), "--keys KEYS.json")
}
