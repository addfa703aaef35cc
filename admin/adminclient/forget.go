package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/lethe-privacy/lethe/admin"
)

// Each call returns the API's answer as it was sent (JSON), or an error:
// an *APIError when the server refused.

// Preview asks what a forget of subject would delete, and its confirm
// token.
func (c *Client) Preview(ctx context.Context, subject string) ([]byte, error) {
	return c.call(ctx, http.MethodPost, "/v1/forget/preview", admin.SubjectRequest{Subject: subject})
}

// Confirm starts the forget a preview of subject gave confirmToken for;
// nothingFound confirms a preview that found no record.
func (c *Client) Confirm(ctx context.Context, subject, confirmToken string, nothingFound bool) ([]byte, error) {
	return c.call(ctx, http.MethodPost, "/v1/forget", admin.ForgetRequest{Subject: subject, ConfirmToken: confirmToken, NothingFound: nothingFound})
}

// Lift accepts writes about subject again.
func (c *Client) Lift(ctx context.Context, subject string) ([]byte, error) {
	return c.call(ctx, http.MethodPost, "/v1/tombstones/lift", admin.SubjectRequest{Subject: subject})
}

// Reverify checks again that the subject of the completed forget id is
// absent.
func (c *Client) Reverify(ctx context.Context, id, subject string) ([]byte, error) {
	return c.call(ctx, http.MethodPost, "/v1/forget/"+url.PathEscape(id)+"/reverify", admin.SubjectRequest{Subject: subject})
}

// Status is where the forget id stands.
func (c *Client) Status(ctx context.Context, id string) ([]byte, error) {
	return c.call(ctx, http.MethodGet, "/v1/forget/"+url.PathEscape(id), nil)
}

// Certificate is the signed certificate of the forget id, byte for byte
// as the server sent it: the signature covers those bytes.
func (c *Client) Certificate(ctx context.Context, id string) ([]byte, error) {
	return c.call(ctx, http.MethodGet, "/v1/forget/"+url.PathEscape(id)+"/certificate", nil)
}

// Whoami is who the client's token belongs to: its name and role.
func (c *Client) Whoami(ctx context.Context) (admin.Caller, error) {
	body, err := c.call(ctx, http.MethodGet, "/v1/whoami", nil)
	if err != nil {
		return admin.Caller{}, err
	}
	var who admin.Caller
	if err := json.Unmarshal(body, &who); err != nil {
		return admin.Caller{}, fmt.Errorf("the admin API's answer to whoami is not JSON: %w", err)
	}
	return who, nil
}

// Forget is what a lethe-proxy forget subcommand sends: the request id
// (status, certificate, reverify), the subject (preview, confirm, lift,
// reverify), and confirm's token and nothing-found flag.
type Forget struct {
	ID, Subject, ConfirmToken string
	NothingFound              bool
}

// TakesSubject reports whether the forget subcommand sub reads a subject.
func TakesSubject(sub string) bool {
	switch sub {
	case "preview", "confirm", "lift", "reverify":
		return true
	}
	return false
}

// Do makes the call of the forget subcommand sub (preview, confirm, lift,
// reverify, status, certificate) with what f holds.
func (c *Client) Do(ctx context.Context, sub string, f Forget) ([]byte, error) {
	switch sub {
	case "preview":
		return c.Preview(ctx, f.Subject)
	case "confirm":
		return c.Confirm(ctx, f.Subject, f.ConfirmToken, f.NothingFound)
	case "lift":
		return c.Lift(ctx, f.Subject)
	case "reverify":
		return c.Reverify(ctx, f.ID, f.Subject)
	case "status":
		return c.Status(ctx, f.ID)
	case "certificate":
		return c.Certificate(ctx, f.ID)
	}
	return nil, fmt.Errorf("unknown forget subcommand %q", sub)
}
