package certificate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testReport(at time.Time) Report {
	cutoff := at.Add(-90 * 24 * time.Hour)
	return Report{Kind: EventRetentionSwept, RunID: "sweep-20260901T000000Z", At: at, Layers: []ReportLayer{
		{Store: "postgres", Table: "public.chat_memory", Found: 3, Done: 3, Method: "DELETE ... WHERE created_at < $1", Cutoff: &cutoff},
	}}
}

// loggedReport signs r with s and logs its event between others.
func loggedReport(t *testing.T, s *Signer, r Report) []byte {
	t.Helper()
	sr, err := SignReport(s, r)
	require.NoError(t, err)
	leaf, err := sr.Leaf()
	require.NoError(t, err)
	var l testLog
	l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0001"})
	i := l.append(t, leaf)
	l.appendEvent(t, Event{Event: EventRequested, RequestID: "req-0002"})
	_, cp := l.checkpoint(t, s)
	sr.AttachLog(leaf, i, l.prove(t, i), cp)
	data, err := sr.Marshal()
	require.NoError(t, err)
	return data
}

func TestReport_SignedAndLoggedReportVerifies(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	data := loggedReport(t, f.op, testReport(at))
	r, err := VerifyReport(data, f.keys)
	require.NoError(t, err)
	assert.Equal(t, EventRetentionSwept, r.Kind)
	assert.Equal(t, int64(3), r.Layers[0].Done)
	assert.Equal(t, at.Add(-90*24*time.Hour), *r.Layers[0].Cutoff)

	var sr SignedReport
	require.NoError(t, json.Unmarshal(data, &sr))
	e, err := ParseEvent(sr.Log.Leaf)
	require.NoError(t, err)
	assert.Equal(t, sr.PayloadSHA256, e.ReportSHA256, "the log event names the report's hash")
}

func TestReport_VerifyRejectsForgeriesAndTampering(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	good := loggedReport(t, f.op, testReport(at))
	var sr SignedReport
	require.NoError(t, json.Unmarshal(good, &sr))
	mutate := func(change func(*SignedReport)) []byte {
		c := sr
		c.Log = &LogProof{}
		*c.Log = *sr.Log
		change(&c)
		b, err := json.Marshal(c)
		require.NoError(t, err)
		return b
	}
	cases := map[string][]byte{
		"attacker's key": loggedReport(t, f.attacker, testReport(at)),
		"payload changed": mutate(func(c *SignedReport) {
			c.Payload = []byte(strings.Replace(string(c.Payload), `"done":3`, `"done":4`, 1))
		}),
		"another leaf": mutate(func(c *SignedReport) {
			c.Log.Leaf = []byte(`{"v":1,"event":"forget.requested","request_id":"req-0001"}`)
		}),
		"leaf moved":     mutate(func(c *SignedReport) { c.Log.Index = 0 }),
		"unknown member": []byte(strings.Replace(string(good), `"lethe_report"`, `"extra": 1, "lethe_report"`, 1)),
		"outside window": loggedReport(t, f.op, testReport(testRotation.Add(time.Hour))),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := VerifyReport(data, f.keys)
			assert.Error(t, err)
		})
	}
}

func TestReport_SignRefusesAnUnknownKindOrRunID(t *testing.T) {
	f := newFixture(t)
	r := testReport(time.Now())
	r.Kind = EventCompleted
	_, err := SignReport(f.op, r)
	assert.Error(t, err)
	r = testReport(time.Now())
	r.RunID = "a run"
	_, err = SignReport(f.op, r)
	assert.Error(t, err)
}
