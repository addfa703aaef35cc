package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// DefaultPoll is how often Wait asks where a forget stands.
const DefaultPoll = time.Second

// StatusOf is where the forget id stands, decoded.
func (c *Client) StatusOf(ctx context.Context, id string) (engine.Status, error) {
	body, err := c.Status(ctx, id)
	if err != nil {
		return engine.Status{}, err
	}
	var st engine.Status
	if err := json.Unmarshal(body, &st); err != nil {
		return engine.Status{}, fmt.Errorf("the admin API's status of request %s is not JSON: %w", id, err)
	}
	return st, nil
}

// Wait asks every poll (DefaultPoll when 0) where the forget id stands
// until it has ended (completed or failed), printing on progress a line
// for each layer whenever what it says of that layer changes. It returns
// the last status; when ctx ends first, an error saying the forget goes on
// without the caller.
func (c *Client) Wait(ctx context.Context, id string, poll time.Duration, progress io.Writer) (engine.Status, error) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	shown := map[string]string{}
	for {
		st, err := c.StatusOf(ctx, id)
		if err != nil {
			return engine.Status{}, err
		}
		for _, l := range st.Layers {
			key, line := string(l.Store)+" "+l.Table, layerLine(l)
			if shown[key] != line {
				fmt.Fprintf(progress, "  %s %s: %s\n", l.Store, l.Table, line)
				shown[key] = line
			}
		}
		if st.Status != ledger.ForgetReceived {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("stopped waiting; the forget goes on in the proxy: follow it with `lethe-proxy forget status --wait %s`", id)
		case <-time.After(poll):
		}
	}
}

// layerLine says where one layer of a forget stands.
func layerLine(l engine.LayerStatus) string {
	line := fmt.Sprintf("deleted %d, residual %d", l.Deleted, l.Residual)
	switch {
	case l.Done:
		line += ", done"
	case l.Unverified:
		line += ", still found: verified again later"
	default:
		line += ", in progress"
	}
	return line
}

// WaitAndPrint is forget status --wait: Wait with each layer's progress
// on stderr, then the last status as indented JSON on stdout and its open
// horizons on stderr. It reports whether the forget completed.
func (c *Client) WaitAndPrint(ctx context.Context, id string, stdout, stderr io.Writer) (completed bool, err error) {
	st, err := c.Wait(ctx, id, 0, stderr)
	if err != nil {
		return false, err
	}
	b, _ := json.MarshalIndent(st, "", "  ") // plain data: cannot fail
	fmt.Fprintf(stdout, "%s\n", b)
	PrintOpenHorizons(st, stderr)
	return st.Status == ledger.ForgetCompleted, nil
}
