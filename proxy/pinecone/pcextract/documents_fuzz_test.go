package pcextract

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lethe-privacy/lethe/extract"
)

// The documents extractors checked against a reference built on
// encoding/json: json.Valid, then a json.Decoder token stream (UseNumber)
// into objects that keep every member, so that repeats are seen; numbers
// must be written as the decimal their float64's shortest text names,
// compared as exact rationals (math/big). The reference cannot see
// invalid UTF-8 or lone surrogate escapes (encoding/json replaces them
// with U+FFFD), so where the body holds one the extractor may refuse what
// the reference accepts, and nothing else differs.

type refMember struct {
	key string
	val any // string, json.Number, bool, nil, []any, []refMember
}

func refValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := []refMember{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := refValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, refMember{key: k.(string), val: v})
		}
		_, err = dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := refValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err = dec.Token()
		return arr, err
	}
	return tok, nil
}

var errRef = errors.New("reference refuses")

// refGet returns the one member named key (nil, false when absent) and
// errRef when it appears more than once.
func refGet(obj []refMember, key string) (any, bool, error) {
	var v any
	found := false
	for _, m := range obj {
		if m.key == key {
			if found {
				return nil, false, errRef
			}
			v, found = m.val, true
		}
	}
	return v, found, nil
}

// refSubjects is jsonObjectSubjects by the reference's reading.
func refSubjects(obj []refMember, fields []string) ([]string, error) {
	var out []string
	for _, f := range fields {
		v, ok, err := refGet(obj, f)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return nil, errRef
			}
			// The number must be written as the decimal its float64's
			// shortest text names (the one text NumberSubject keeps).
			s, _ := NumberSubject(x)
			written, _ := new(big.Rat).SetString(string(v))
			kept, _ := new(big.Rat).SetString(s)
			if written == nil || kept == nil || written.Cmp(kept) != 0 {
				return nil, errRef
			}
			out = append(out, s)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

func refDocID(d any) (string, []refMember, error) {
	obj, ok := d.([]refMember)
	if !ok {
		return "", nil, errRef
	}
	id, _, err := refGet(obj, "_id")
	s, isString := id.(string)
	if err != nil || !isString || s == "" {
		return "", nil, errRef
	}
	return s, obj, nil
}

// refMemberOf reads a member that must be of kind want (a []any or
// []refMember) or null; present is false when absent or null.
func refMemberOf[T any](obj []refMember, key string) (val T, present bool, err error) {
	v, ok, err := refGet(obj, key)
	if err != nil || !ok || v == nil {
		return val, false, err
	}
	val, isKind := v.(T)
	if !isKind {
		return val, false, errRef
	}
	return val, true, nil
}

func refNames(list []any, fields []string) (bool, error) {
	found := false
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return false, errRef
		}
		for _, f := range fields {
			found = found || s == f
		}
	}
	return found, nil
}

func (r *Rules) refDocuments(op, namespace string, body []byte) ([]extract.Tag, error) {
	if !json.Valid(body) || !utf8.ValidString(namespace) {
		return nil, errRef
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := refValue(dec)
	root, isObject := v.([]refMember)
	if err != nil || !isObject {
		return nil, errRef
	}
	ns := extract.CanonicalNamespace(namespace)
	fields, covered := r.fields(ns)
	table := r.table(ns)
	var tags []extract.Tag
	switch op {
	case "upsert":
		docs, ok, err := refGet(root, "documents")
		if err != nil || !covered {
			return nil, err
		}
		list, isList := docs.([]any)
		if !ok || !isList {
			return nil, errRef
		}
		for _, d := range list {
			id, obj, err := refDocID(d)
			if err != nil {
				return nil, err
			}
			subjects, err := refSubjects(obj, fields)
			if err != nil {
				return nil, err
			}
			tags = append(tags, extract.Tag{Table: table, Op: extract.OpWrite, ID: id, Subjects: subjects})
		}
	case "update":
		docs, hasDocs, err1 := refMemberOf[[]any](root, "documents")
		_, hasFilter, err2 := refMemberOf[[]refMember](root, "filter")
		set, hasSet, err3 := refMemberOf[[]refMember](root, "set_fields")
		remove, hasRemove, err4 := refMemberOf[[]any](root, "remove_fields")
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, errRef
		}
		if hasDocs && (hasFilter || hasSet && len(set) > 0 || hasRemove && len(remove) > 0) {
			return nil, errRef
		}
		if !covered {
			return nil, nil
		}
		if !hasDocs {
			removes, err := refNames(remove, fields)
			if err != nil {
				return nil, err
			}
			sets := false
			for _, m := range set {
				for _, f := range fields {
					sets = sets || m.key == f
				}
			}
			if removes || sets {
				return []extract.Tag{r.unattributedDocumentsUpdate(ns, fields)}, nil
			}
			return nil, nil
		}
		for _, d := range docs {
			id, obj, err := refDocID(d)
			if err != nil {
				return nil, err
			}
			removeList, _, err := refMemberOf[[]any](obj, "_remove_fields")
			if err != nil {
				return nil, err
			}
			touches, err := refNames(removeList, fields)
			if err != nil {
				return nil, err
			}
			for _, m := range obj {
				for _, f := range fields {
					touches = touches || m.key == f
				}
			}
			if !touches {
				continue
			}
			subjects, err := refSubjects(obj, fields)
			if err != nil {
				return nil, err
			}
			tags = append(tags, extract.Tag{Table: table, Op: extract.OpWrite, ID: id, Subjects: subjects})
		}
	case "delete":
		ids, hasIDs, err := refMemberOf[[]any](root, "ids")
		for _, name := range []string{"filter", "delete_all"} {
			if _, _, dup := refGet(root, name); dup != nil {
				err = dup
			}
		}
		all, _, _ := refMemberOf[bool](root, "delete_all") // the extractor does not judge its type: the store does
		filterValue, _, _ := refGet(root, "filter")
		_, filter := filterValue.([]refMember) // an object; other types are the store's to refuse
		if err != nil || !covered || !hasIDs && !all && !filter {
			return nil, err
		}
		if all {
			tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteAll})
		}
		if filter {
			tags = append(tags, extract.Tag{Table: table, Op: extract.OpDeleteByFilter})
		}
		for _, e := range ids {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, errRef
			}
			tags = append(tags, extract.Tag{Table: table, Op: extract.OpDelete, ID: s})
		}
	}
	return tags, nil
}

// refBlind reports whether body holds what the reference cannot see:
// invalid UTF-8, or a \u escape of a surrogate.
func refBlind(namespace string, body []byte) bool {
	lower := strings.ToLower(string(body))
	return !utf8.Valid(body) || strings.Contains(lower, `\ud8`) || strings.Contains(lower, `\ud9`) ||
		strings.Contains(lower, `\uda`) || strings.Contains(lower, `\udb`) || strings.Contains(lower, `\udc`) ||
		strings.Contains(lower, `\udd`) || strings.Contains(lower, `\ude`) || strings.Contains(lower, `\udf`)
}

func documentsSeeds(f *testing.F) {
	for _, s := range []struct{ ns, body string }{
		{"", `{"documents":[{"_id":"a","user_id":"alice","embedding":[0.1,2e-3],"sparse":{"indices":[1],"values":[0.5]}}]}`},
		{"team", `{"documents":[{"_id":"a","owner":4.242e3,"members":["bob",1,"carol"]}]}`},
		{"__default__", `{"d\u006fcuments":[{"\u005fid":"a","user\u005fid":"x","user_id":"y"}]}`},
		{"", `{"documents":[{"_id":"a","user_id":"x","_remove_fields":["user_id"]}],"set_fields":{},"remove_fields":[]}`},
		{"", `{"filter":{"user_id":"a"},"set_fields":{"user_id":"b"}}`},
		{"team", `{"filter":{"owner":"a"},"remove_fields":["members",2]}`},
		{"", `{"documents":[{"_id":"a"}],"filter":{}}`},
		{"", `{"ids":["a","b"]}`}, {"", `{"ids":["\ud800"],"delete_all":true}`}, {"x", `{"delete_all":true,"delete_all":false}`},
		{"", `{"documents":[{"_id":"a","user_id":12345678901234567890},{"_id":"b","user_id":1e400}]}`},
		{"\xff", `{"documents":[]}`}, {"", "{\"documents\":[{\"_id\":\"a\xff\"}]}"}, {"", `[]`}, {"", `{`}, {"", ``},
	} {
		f.Add(s.ns, []byte(s.body))
	}
}

// FuzzDocumentsAgreesWithEncodingJSON: for any path namespace and body,
// each documents extractor refuses every body the reference refuses
// (invalid JSON, repeats, wrong kinds, inexact numbers), and where it
// accepts one the reference accepts it too with the same tags.
func FuzzDocumentsAgreesWithEncodingJSON(f *testing.F) {
	documentsSeeds(f)
	f.Fuzz(func(t *testing.T, namespace string, body []byte) {
		for _, r := range []*Rules{pcRules(t), pcRulesAny(t)} {
			for op, fn := range map[string]func(*Rules, string, []byte) ([]extract.Tag, error){
				"upsert": (*Rules).UpsertDocumentsREST, "update": (*Rules).UpdateDocumentsREST, "delete": (*Rules).DeleteDocumentsREST,
			} {
				tags, err := fn(r, namespace, body)
				want, refErr := r.refDocuments(op, namespace, body)
				switch {
				case err == nil && refErr != nil:
					t.Fatalf("%s accepted a body the reference refuses: %q", op, body)
				case err == nil:
					checkPineconeTags(t, tags)
					if !reflect.DeepEqual(tags, want) {
						t.Fatalf("%s tags %v, reference %v", op, tags, want)
					}
				case refErr == nil && !refBlind(namespace, body):
					t.Fatalf("%s refused a body the reference accepts: %v", op, err)
				}
			}
		}
	})
}
