package certificate

import (
	"strings"
	"testing"
)

func TestEncodeEvent(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name    string
		event   Event
		want    string
		wantErr bool
	}{
		{name: "completed", event: Event{Event: EventCompleted, RequestID: "r-1", CertificateSHA256: sum},
			want: `{"v":1,"event":"forget.completed","request_id":"r-1","certificate_sha256":"` + sum + `"}`},
		{name: "requested", event: Event{Event: EventRequested, RequestID: "r-1"},
			want: `{"v":1,"event":"forget.requested","request_id":"r-1"}`},
		{name: "reverified", event: Event{Event: EventReverified, RequestID: "r-1"},
			want: `{"v":1,"event":"forget.reverified","request_id":"r-1"}`},
		{name: "late write", event: Event{Event: EventLateWrite, RequestID: "r-1"},
			want: `{"v":1,"event":"forget.late_write","request_id":"r-1"}`},
		{name: "tombstone lifted", event: Event{Event: EventLifted, RequestID: "r-1"},
			want: `{"v":1,"event":"tombstone.lifted","request_id":"r-1"}`},
		{name: "key rotated", event: Event{Event: EventKeyRotated, KeyID: "ed25519:" + strings.Repeat("0", 32)},
			want: `{"v":1,"event":"key.rotated","key_id":"ed25519:00000000000000000000000000000000"}`},
		{name: "retention swept", event: Event{Event: EventRetentionSwept, RequestID: "sweep-1", ReportSHA256: sum},
			want: `{"v":1,"event":"retention.swept","request_id":"sweep-1","report_sha256":"` + sum + `"}`},
		{name: "reconcile without its report", event: Event{Event: EventReconcileAdopted, RequestID: "rec-1"}, wantErr: true},
		{name: "completed with a report", event: Event{Event: EventCompleted, RequestID: "r-1", CertificateSHA256: sum, ReportSHA256: sum}, wantErr: true},
		{name: "unknown kind", event: Event{Event: "forget.started", RequestID: "r-1"}, wantErr: true},
		{name: "version 2", event: Event{V: 2, Event: EventRequested, RequestID: "r-1"}, wantErr: true},
		{name: "completed without hash", event: Event{Event: EventCompleted, RequestID: "r-1"}, wantErr: true},
		{name: "requested with a hash", event: Event{Event: EventRequested, RequestID: "r-1", CertificateSHA256: sum}, wantErr: true},
		{name: "key rotated with a request", event: Event{Event: EventKeyRotated, RequestID: "r-1", KeyID: "ed25519:" + strings.Repeat("0", 32)}, wantErr: true},
		{name: "request id that JSON escapes", event: Event{Event: EventRequested, RequestID: "r<1>"}, wantErr: true},
		{name: "request id that names a person", event: Event{Event: EventRequested, RequestID: "alice@example.com"}, wantErr: true},
		{name: "key id not an id", event: Event{Event: EventKeyRotated, KeyID: "operator"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EncodeEvent(tc.event)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("encoded %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			back, err := ParseEvent(got)
			if err != nil {
				t.Fatal(err)
			}
			if back.V != EventVersion || back.Event != tc.event.Event {
				t.Errorf("ParseEvent = %+v", back)
			}
		})
	}
}

func TestParseEvent_RefusesOtherSpellings(t *testing.T) {
	for _, leaf := range []string{
		`{"event":"forget.requested","v":1,"request_id":"r-1"}`,
		`{"v":1,"event":"forget.requested","request_id":"r-1"} `,
		`{"v":1, "event":"forget.requested","request_id":"r-1"}`,
		`{"v":1,"event":"forget.requested","request_id":"r-1","subject":"x"}`,
		`{"v":1,"event":"forget.requested","request_id":"r\u002d1"}`,
		`{"v":2,"event":"forget.requested","request_id":"r-1"}`,
	} {
		if _, err := ParseEvent([]byte(leaf)); err == nil {
			t.Errorf("accepted %s", leaf)
		}
	}
}
