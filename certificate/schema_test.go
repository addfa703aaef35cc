package certificate

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The member lists of schema.go must name the json tags of the structs
// Sign writes, in field order.
func TestSchema_MembersMatchStructs(t *testing.T) {
	for _, tc := range []struct {
		v       any
		members []string
	}{
		{Envelope{}, envelopeMembers}, {Signature{}, signatureMembers}, {LogProof{}, logMembers},
		{Payload{}, payloadMembersV3}, {Subject{}, subjectMembers}, {Scope{}, scopeMembers},
		{Layer{}, layerMembersV2}, {Physical{}, physicalMembers}, {RelationPages{}, relationMembers},
		{IDsDigest{}, idsDigestMembers}, {Claim{}, claimMembers}, {Horizon{}, horizonMembers},
		{SignedReport{}, reportEnvelopeMembers}, {Report{}, reportMembers}, {ReportLayer{}, reportLayerMembers},
	} {
		typ := reflect.TypeOf(tc.v)
		var tags []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			tags = append(tags, name)
		}
		if !slices.Equal(tags, tc.members) {
			t.Errorf("%s: json tags %q, members %q", typ.Name(), tags, tc.members)
		}
		if len(tc.members) > maxMembers {
			t.Errorf("%s has %d members; raise maxMembers", typ.Name(), len(tc.members))
		}
	}
}

// TestParsePayload_ReadsMembersStrictly covers what the JSON reader decides
// beyond TestVerify_Verdicts: spellings with escapes, repeated members, and
// which problem is reported when there are several.
func TestParsePayload_ReadsMembersStrictly(t *testing.T) {
	f := newFixture(t)
	_, signed, err := Sign(f.op, testPayload(t, "req-0042", testIssued))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		edits  []string // old, new, … for strings.NewReplacer
		want   Verdict
		reason string // "" for valid
	}{
		{name: "member name with an escape", edits: []string{`"tool"`, `"t\u006fol"`}},
		{name: "repeated member", edits: []string{`"tool":"lethe-proxy 0.1.0"`, `"tool":1,"tool":"lethe-proxy 0.1.0"`},
			want: VerdictMalformed, reason: `member "tool" appears twice`},
		{name: "repeated nested member", edits: []string{`"count":3`, `"count":3,"count":3`},
			want: VerdictMalformed, reason: `member "deleted_ids.count" appears twice`},
		{name: "surrogate pair", edits: []string{`"statement":"Every`, `"statement":"\ud83d\ude00 Every`}},
		{name: "null string", edits: []string{`"tool":"lethe-proxy 0.1.0"`, `"tool":null`},
			want: VerdictMalformed, reason: "tool is not a string"},
		{name: "integer with a fraction", edits: []string{`"requested":2`, `"requested":2.5`},
			want: VerdictMalformed, reason: "layers[0].requested: 2.5 is not a 64-bit integer"},
		{name: "integer beyond 64 bits", edits: []string{`"count":3`, `"count":9223372036854775808`},
			want: VerdictMalformed, reason: "deleted_ids.count: 9223372036854775808 is not a 64-bit integer"},
		{name: "nested unknown member", edits: []string{`"verified_absent":true,"verify_method":"select`, `"verified_absent":true,"extra":[],"verify_method":"select`},
			want: VerdictSchemaMismatch, reason: `unknown member "layers[0].extra"`},
		{name: "the least unknown member in byte order", edits: []string{`"tool"`, `"zz":1,"Tool":2,"tool"`},
			want: VerdictSchemaMismatch, reason: `unknown member "Tool"`},
		{name: "a missing member outranks an earlier wrong type", edits: []string{`"request_id":"req-0042"`, `"request_id":42`, `"tool":"lethe-proxy 0.1.0",`, ``},
			want: VerdictSchemaMismatch, reason: `member "tool" is missing`},
		{name: "a wrong type outranks an earlier bad integer", edits: []string{`"requested":2`, `"requested":2.5`, `"tool":"lethe-proxy 0.1.0"`, `"tool":1`},
			want: VerdictMalformed, reason: "tool is not a string"},
		{name: "a problem inside a member comes before its object's unknown member", edits: []string{`"commitment"`, `"Commitment"`, `"tool"`, `"aaa":1,"tool"`},
			want: VerdictSchemaMismatch, reason: `member "subject.commitment" is missing`},
		{name: "trailing data", edits: []string{`]}}`, `]}}}`}, want: VerdictMalformed, reason: "data after the JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := strings.NewReplacer(tc.edits...).Replace(string(signed))
			if payload == string(signed) {
				t.Fatalf("%q changed nothing", tc.edits)
			}
			p, v, reason := parsePayload([]byte(payload))
			if v != tc.want || reason != tc.reason {
				t.Fatalf("verdict %q (%s), want %q (%s)", v, reason, tc.want, tc.reason)
			}
			if v == "" && (p == nil || p.Tool != "lethe-proxy 0.1.0") {
				t.Fatalf("payload %+v", p)
			}
		})
	}
}
