package adminclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/certificate/offline"
	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// ForgetRun is a forget in one step, as lethe-proxy forget run makes it.
type ForgetRun struct {
	Subject string
	// Ask puts a yes/no question to the operator (AskOn); nil confirms
	// without asking (--yes).
	Ask func(question string) (bool, error)
	// NothingFound lets a run without Ask confirm a preview that found
	// nothing; with Ask, the operator is asked instead.
	NothingFound bool
	// Out is the certificate's file; "" is certificate-REQUEST_ID.json.
	Out string
	// KeysFile is the operator's trusted keys file the certificate is
	// verified against, offline; "" has the proxy verify it.
	KeysFile string
	// Poll is how often the forget's progress is asked (DefaultPoll
	// when 0).
	Poll time.Duration
}

// ErrDeclined is returned when the operator answers no: nothing was
// deleted.
var ErrDeclined = errors.New("not confirmed: nothing was deleted")

// RunForget previews a forget of run.Subject and shows its counts (and
// the near-miss warning when nothing is found) on progress, has it
// confirmed, starts it, waits for it with a line per layer, writes its
// certificate to a file and verifies it. It prints the request id, the
// subject secret, the certificate's file and the verdict on stdout, and
// returns whether the certificate is valid; an error means the forget did
// not reach a certificate (ErrDeclined: it was not started).
func (c *Client) RunForget(ctx context.Context, run ForgetRun, stdout, progress io.Writer) (bool, error) {
	var keys *certificate.KeySet
	if run.KeysFile != "" { // before anything is deleted: a wrong path must not leave a forget half-checked
		ks, err := certificate.ReadKeySet(run.KeysFile)
		if err != nil {
			return false, fmt.Errorf("--keys: %w", err)
		}
		keys = &ks
	}
	pv, err := c.previewOf(ctx, run.Subject)
	if err != nil {
		return false, err
	}
	showPreview(pv, progress)
	if err := confirmRun(run, pv); err != nil {
		return false, err
	}
	body, err := c.Confirm(ctx, run.Subject, pv.Token, pv.NothingFound)
	if err != nil {
		return false, err
	}
	var receipt engine.Receipt
	if err := json.Unmarshal(body, &receipt); err != nil {
		return false, fmt.Errorf("the admin API's answer to the forget is not JSON: %w", err)
	}
	fmt.Fprintf(stdout, "request_id: %s\nsubject_secret: %s\n", receipt.RequestID, receipt.SubjectSecret)
	fmt.Fprintf(progress, "Forget %s started (deadline %s); give subject_secret to the data subject: it is not stored anywhere.\n",
		receipt.RequestID, receipt.Deadline.Format(time.RFC3339))
	st, err := c.Wait(ctx, receipt.RequestID, run.Poll, progress)
	if err != nil {
		return false, err
	}
	if st.Status != ledger.ForgetCompleted {
		return false, fmt.Errorf("forget %s %s: %s; see `lethe-proxy forget status %s`", receipt.RequestID, st.Status, st.Error, receipt.RequestID)
	}
	cert, err := c.Certificate(ctx, receipt.RequestID)
	if err != nil {
		return false, err
	}
	out := run.Out
	if out == "" {
		out = "certificate-" + receipt.RequestID + ".json"
	}
	// Byte for byte: the signature covers what the server sent.
	if err := offline.WriteFile(out, cert); err != nil {
		return false, fmt.Errorf("writing the certificate of request %s: %w; fetch it again with `lethe-proxy forget certificate %s --out FILE`", receipt.RequestID, err, receipt.RequestID)
	}
	fmt.Fprintf(stdout, "certificate: %s\n", out)
	if keys != nil {
		return offline.Verify(cert, *keys, certificate.ReportPolicy{Now: time.Now()}, stdout), nil
	}
	r, err := c.VerifyOnServer(ctx, cert)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "verdict: %s (by the proxy; pass --keys KEYS.json to verify offline)\n", r.Verdict)
	if r.Physical != "" {
		fmt.Fprintf(stdout, "physical: %s\n", r.Physical)
	}
	if r.Horizon != "" {
		fmt.Fprintf(stdout, "horizon: %s\n", r.Horizon)
	}
	fmt.Fprintf(stdout, "reason: %s\n", r.Reason)
	return r.Verdict == string(certificate.VerdictValid), nil
}

// previewOf is Preview, decoded.
func (c *Client) previewOf(ctx context.Context, subject string) (engine.Preview, error) {
	body, err := c.Preview(ctx, subject)
	if err != nil {
		return engine.Preview{}, err
	}
	var pv engine.Preview
	if err := json.Unmarshal(body, &pv); err != nil {
		return engine.Preview{}, fmt.Errorf("the admin API's preview is not JSON: %w", err)
	}
	return pv, nil
}

// showPreview prints what the forget would delete, layer by layer; when
// nothing is found, the warning (counts only, never the subject).
func showPreview(pv engine.Preview, out io.Writer) {
	fmt.Fprintln(out, "A forget would delete:")
	for _, l := range pv.Layers {
		fmt.Fprintf(out, "  %s %s: %d rows, %d ledger records\n", l.Store, l.Table, l.Rows, l.LedgerRecords)
	}
	if pv.NothingFound {
		fmt.Fprintf(out, "WARNING: %s\n", pv.Warning)
	}
}

// confirmRun asks the operator, or checks that the flags confirm, a forget
// of what pv found.
func confirmRun(run ForgetRun, pv engine.Preview) error {
	if run.Ask == nil {
		if pv.NothingFound && !run.NothingFound {
			return errors.New("the preview found nothing (see the warning above): check the subject, or pass --nothing-found with --yes to certify that nothing was found")
		}
		return nil
	}
	question := "Delete these records and certify it?"
	if pv.NothingFound {
		question = "Nothing was found. Certify that nothing was found?"
	}
	yes, err := run.Ask(question)
	if err != nil {
		return err
	}
	if !yes {
		return ErrDeclined
	}
	return nil
}

// VerifyOnServer has the proxy verify cert against its own keys.
func (c *Client) VerifyOnServer(ctx context.Context, cert []byte) (engine.VerifyResult, error) {
	body, err := c.send(ctx, http.MethodPost, "/v1/verify", cert)
	if err != nil {
		return engine.VerifyResult{}, err
	}
	var r engine.VerifyResult
	if err := json.Unmarshal(body, &r); err != nil {
		return engine.VerifyResult{}, fmt.Errorf("the admin API's verdict is not JSON: %w", err)
	}
	return r, nil
}
