package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/engine"
)

// The tools' arguments. Field comments are what the agent reads.

// PreviewArgs names the person to preview: by reference (preferred: the
// subject stays out of the transcript) or, once, by the subject's text.
type PreviewArgs struct {
	SubjectRef string `json:"subject_ref,omitempty" jsonschema:"a subject reference (lsubj_…) from an earlier preview or from lethe-proxy mcp ref; preferred, since it keeps personal data out of this conversation"`
	Subject    string `json:"subject,omitempty" jsonschema:"the subject's identifier (user id, e-mail…) exactly as the application stored it; give it only when no subject_ref exists, and use the subject_ref preview returns from then on"`
}

// ForgetArgs confirm a preview.
type ForgetArgs struct {
	SubjectRef   string `json:"subject_ref" jsonschema:"the subject_ref preview returned"`
	ConfirmToken string `json:"confirm_token" jsonschema:"the confirm_token preview returned; it confirms exactly the counts preview showed and expires"`
	NothingFound bool   `json:"nothing_found,omitempty" jsonschema:"set only when preview said nothing_found and a person has agreed that certifying 'nothing found' is right (a mistyped subject finds nothing)"`
}

// RequestArgs name a forget request.
type RequestArgs struct {
	RequestID string `json:"request_id" jsonschema:"the request_id forget returned"`
}

// ReverifyArgs name a completed forget and its subject.
type ReverifyArgs struct {
	RequestID  string `json:"request_id" jsonschema:"the request_id of a completed forget"`
	SubjectRef string `json:"subject_ref" jsonschema:"the subject_ref of the person that request forgot"`
}

// VerifyArgs give a certificate to verify, or the request whose
// certificate to fetch and verify.
type VerifyArgs struct {
	RequestID   string `json:"request_id,omitempty" jsonschema:"verify the certificate of this forget request"`
	Certificate string `json:"certificate,omitempty" jsonschema:"or verify this certificate (or signed report): its JSON text, byte for byte"`
}

// CoverageArgs take nothing: coverage surveys every store.
type CoverageArgs struct{}

// PreviewResult is preview's answer with the subject's reference.
type PreviewResult struct {
	SubjectRef string `json:"subject_ref"`
	engine.Preview
	Next string `json:"next"`
}

// ForgetResult is forget's receipt, the subject secret sealed.
type ForgetResult struct {
	RequestID string    `json:"request_id"`
	Deadline  time.Time `json:"deadline,omitzero"`
	// SubjectSecretRef seals the secret that lets the person recognise
	// their certificate; absent when the confirm token had already been
	// used (the secret is given once and never stored).
	SubjectSecretRef string `json:"subject_secret_ref,omitempty"`
	AlreadyStarted   bool   `json:"already_started,omitempty"`
	Next             string `json:"next"`
}

// VerifyResult is the offline verdict on a certificate or signed report.
type VerifyResult struct {
	Valid   bool   `json:"valid"`
	Verdict string `json:"verdict"`
	// Report is what `lethe-proxy verify` prints for the same input.
	Report string `json:"report"`
}

func (t *tools) preview(ctx context.Context, req *mcp.CallToolRequest, args PreviewArgs) (*mcp.CallToolResult, any, error) {
	var subject string
	switch {
	case args.SubjectRef != "" && args.Subject != "":
		return nil, nil, errors.New("give subject_ref or subject, not both")
	case args.SubjectRef != "":
		s, err := t.refs.Open(KindSubject, args.SubjectRef)
		if err != nil {
			return nil, nil, err
		}
		subject = s
	case args.Subject != "":
		if err := admin.CheckSubject(args.Subject); err != nil {
			return nil, nil, err
		}
		subject = args.Subject
	default:
		return nil, nil, errors.New("name the person: give subject_ref (preferred) or subject")
	}
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	body, err := client.Preview(ctx, subject)
	if err != nil {
		return nil, nil, err
	}
	out := PreviewResult{SubjectRef: t.refs.Seal(KindSubject, subject)}
	if err := json.Unmarshal(body, &out.Preview); err != nil {
		return nil, nil, fmt.Errorf("the admin API's preview is not what this server expects (%v); are lethe-proxy and lethe-proxy mcp the same version?", err)
	}
	out.Next = "Show these counts to a person. To go ahead, call forget with subject_ref and confirm_token before expires_at."
	if out.NothingFound {
		out.Next = "Nothing was found: check the spelling with the person who asked. Only if certifying 'nothing found' is right, call forget with nothing_found: true."
	}
	return nil, out, nil
}

func (t *tools) forget(ctx context.Context, req *mcp.CallToolRequest, args ForgetArgs) (*mcp.CallToolResult, any, error) {
	subject, err := t.refs.Open(KindSubject, args.SubjectRef)
	if err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(args.ConfirmToken) == "" {
		return nil, nil, errors.New("confirm_token is empty: call preview first and pass the confirm_token it returns")
	}
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	body, err := client.Confirm(ctx, subject, args.ConfirmToken, args.NothingFound)
	// The same confirm token again is the same forget: answer with the
	// request it opened, so a retried call does what the first one did.
	if ae := (*adminclient.APIError)(nil); errors.As(err, &ae) && ae.Body.Code == "token_used" && ae.Body.RequestID != "" {
		return nil, ForgetResult{RequestID: ae.Body.RequestID, AlreadyStarted: true,
			Next: "This confirm token already started this request; follow it with status. The subject secret was given to the first call only."}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var receipt engine.Receipt
	if err := json.Unmarshal(body, &receipt); err != nil {
		return nil, nil, fmt.Errorf("the admin API's receipt is not what this server expects (%v); are lethe-proxy and lethe-proxy mcp the same version?", err)
	}
	return nil, ForgetResult{
		RequestID: receipt.RequestID, Deadline: receipt.Deadline,
		SubjectSecretRef: t.refs.Seal(KindSecret, receipt.SubjectSecret),
		Next: "Follow the request with status until it is completed, then fetch its certificate. " +
			"subject_secret_ref is for the person only: an operator opens it with `lethe-proxy mcp open` and gives the secret to them.",
	}, nil
}

func (t *tools) reverify(ctx context.Context, req *mcp.CallToolRequest, args ReverifyArgs) (*mcp.CallToolResult, any, error) {
	subject, err := t.refs.Open(KindSubject, args.SubjectRef)
	if err != nil {
		return nil, nil, err
	}
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	return answer(client.Reverify(ctx, args.RequestID, subject))
}

func (t *tools) status(ctx context.Context, req *mcp.CallToolRequest, args RequestArgs) (*mcp.CallToolResult, any, error) {
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	return answer(client.Status(ctx, args.RequestID))
}

func (t *tools) certificate(ctx context.Context, req *mcp.CallToolRequest, args RequestArgs) (*mcp.CallToolResult, any, error) {
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	cert, err := client.Certificate(ctx, args.RequestID)
	if err != nil {
		return nil, nil, err
	}
	// The text content is the certificate byte for byte, as signed.
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(cert)}}}, json.RawMessage(cert), nil
}

func (t *tools) verify(ctx context.Context, req *mcp.CallToolRequest, args VerifyArgs) (*mcp.CallToolResult, any, error) {
	if t.keys == nil {
		return nil, nil, errors.New("verify needs the operator's trusted keys file: start lethe-proxy mcp with --keys KEYS.json")
	}
	var data []byte
	switch {
	case args.RequestID != "" && args.Certificate != "":
		return nil, nil, errors.New("give request_id or certificate, not both")
	case args.Certificate != "":
		data = []byte(args.Certificate)
	case args.RequestID != "":
		client, err := t.client(req.Extra)
		if err != nil {
			return nil, nil, err
		}
		if data, err = client.Certificate(ctx, args.RequestID); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, errors.New("give request_id (its certificate is fetched) or certificate (its JSON text)")
	}
	return nil, verifyOffline(data, *t.keys, t.now()), nil
}

func (t *tools) coverage(ctx context.Context, req *mcp.CallToolRequest, _ CoverageArgs) (*mcp.CallToolResult, any, error) {
	client, err := t.client(req.Extra)
	if err != nil {
		return nil, nil, err
	}
	return answer(client.Coverage(ctx))
}

// answer passes an admin API answer through as the tool's result.
func answer(body []byte, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return nil, nil, err
	}
	return nil, json.RawMessage(body), nil
}
