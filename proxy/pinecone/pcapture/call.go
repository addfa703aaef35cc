package pcapture

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// outcome is what the upstream's answer says of a write.
type outcome uint8

const (
	unknown outcome = iota // may have been applied: the intent stays pending
	applied
	notApplied
)

// call follows one forwarded write to its outcome (pinecone.Call).
type call struct {
	hook    *Hook
	index   string
	grpc    bool
	intent  ledger.IntentID // 0: nothing to confirm (deletes only, or fail-open)
	deletes []extract.Tag   // the application's deletes by id
	moved   []extract.Tag   // records whose earlier subjects no longer hold once applied
	cleared []string        // tables whose every record the write deletes (deleteAll, namespace delete)
	// filtered are the tables a delete by filter removes records of, which
	// only the store knows (Hook.OnFilterDelete).
	filtered []string
	since    time.Time // FilterDelete.Since, set by markSince's callback
	// The answer's x-pinecone-request-lsn, read by Response before the
	// call settles.
	requestLSN uint64
	hasLSN     bool
	// Restore detection's watch (lsn.go), with the write's namespace and
	// the floor it gave; nil when none is set.
	lsnWatch  LSNWatch
	namespace string
	lsnFloor  uint64
	once      sync.Once
}

// Response settles a REST write by its status; a gRPC write by its
// grpc-status, which a trailers-only answer carries in its headers and
// any other in its trailers, read once the body has streamed to the
// client.
func (c *call) Response(resp *http.Response) error {
	c.requestLSN, c.hasLSN = requestLSN(resp.Header)
	if !c.grpc {
		c.settle(restOutcome(resp.StatusCode))
		return nil
	}
	if s := resp.Header.Get("Grpc-Status"); s != "" {
		c.settle(grpcOutcome(s))
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		c.settle(unknown)
		return nil
	}
	resp.Body = &trailerWatch{ReadCloser: resp.Body, resp: resp, call: c}
	return nil
}

// Unreachable drops the intent when the upstream could not be dialled
// (nothing was sent); any other broken exchange leaves it pending.
func (c *call) Unreachable(err error) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		c.settle(notApplied)
		return
	}
	c.settle(unknown)
}

// settle reports the outcome to capture, once.
func (c *call) settle(o outcome) {
	c.once.Do(func() {
		core := c.hook.core
		switch o {
		case applied:
			c.lsnApplied()
			switch {
			case c.intent != 0 && len(c.moved) > 0:
				core.ConfirmMoved(ledger.StorePinecone, []ledger.IntentID{c.intent}, c.moved)
			case c.intent != 0:
				core.Confirm([]ledger.IntentID{c.intent})
			case len(c.moved) > 0: // the new subject names nobody
				core.Deleted(ledger.StorePinecone, c.moved)
			}
			if len(c.deletes) > 0 {
				core.Deleted(ledger.StorePinecone, c.deletes)
			}
			core.TablesDeleted(ledger.StorePinecone, c.cleared)
			if len(c.filtered) > 0 {
				// Reported once the confirmations queued before it are in
				// the ledger, so that the settle reads the records written
				// before the delete.
				core.AfterQueued(func() { c.hook.filterDeletesApplied(c) })
			}
		case notApplied:
			if c.intent != 0 {
				core.Drop([]ledger.IntentID{c.intent})
			}
		default:
			if c.intent != 0 {
				c.hook.log.Info("pinecone write outcome unknown; its intent stays pending and forget treats its records as candidates",
					"index", c.index, "intent", int64(c.intent))
			}
			if len(c.filtered)+len(c.cleared) > 0 {
				// The delete may have been applied: only reading the
				// store tells which records it removed, as for a delete
				// by filter, whatever it named.
				c.filtered = append(c.filtered, c.cleared...)
				core.AfterQueued(func() { c.hook.filterDeletesApplied(c) })
			}
		}
	})
}

// restOutcome: 2xx applied; 4xx but 408 certainly not; the rest unknown.
func restOutcome(status int) outcome {
	switch {
	case status >= 200 && status < 300:
		return applied
	case status >= 400 && status < 500 && status != http.StatusRequestTimeout:
		return notApplied
	}
	return unknown
}

// grpcOutcome: OK applied; codes that refuse a call before it runs
// certainly not; the rest (CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, ABORTED,
// INTERNAL, UNAVAILABLE, DATA_LOSS, anything unreadable) unknown.
func grpcOutcome(status string) outcome {
	code, err := strconv.Atoi(status)
	if err != nil {
		return unknown
	}
	switch code {
	case 0:
		return applied
	case 3, 5, 6, 7, 8, 9, 11, 12, 16:
		return notApplied
	}
	return unknown
}

// trailerWatch settles a gRPC call when its body ends: at EOF the
// trailers, and so grpc-status, are in resp.Trailer. A body closed before
// EOF (the client went away) leaves the outcome unknown.
type trailerWatch struct {
	io.ReadCloser
	resp *http.Response
	call *call
}

func (t *trailerWatch) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err == io.EOF {
		t.call.settle(grpcOutcome(t.resp.Trailer.Get("Grpc-Status")))
	}
	return n, err
}

func (t *trailerWatch) Close() error {
	t.call.settle(unknown)
	return t.ReadCloser.Close()
}
