package certificate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// decodeStrict decodes exactly one JSON value into v, refusing unknown
// members and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// decodeObject decodes one JSON object generically, numbers kept as text
// so that no number is rejected here for being out of range.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// shapeCheck compares a generically decoded JSON value with the Go type
// it must fill. It exists because encoding/json alone cannot tell a missing
// member from a zero one, matches member names case-insensitively, and
// reads null as zero: a certificate must spell every member exactly.
type shapeCheck struct {
	members string   // first unknown or missing member: schema_mismatch
	types   string   // first member of the wrong JSON type: malformed
	path    []string // where the walk is, joined only to report a problem
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	numberType = reflect.TypeFor[json.Number]()
)

// member is one JSON member a struct declares.
type member struct {
	name     string
	index    int
	optional bool // omitempty
}

// membersCache maps a struct type to its []member, computed once: reading
// struct tags on every verification would cost more than the JSON scan.
var membersCache sync.Map

func membersOf(t reflect.Type) []member {
	if m, ok := membersCache.Load(t); ok {
		return m.([]member)
	}
	ms := make([]member, t.NumField())
	for i := range ms {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		ms[i] = member{name: name, index: i, optional: strings.Contains(opts, "omitempty")}
	}
	membersCache.Store(t, ms)
	return ms
}

// checkShape walks v against t. Member problems outrank type problems,
// wherever each occurs in the document.
func checkShape(v any, t reflect.Type) *shapeCheck {
	c := &shapeCheck{}
	c.walk(v, t)
	if c.members == "" && c.types == "" {
		return nil
	}
	return c
}

func (c *shapeCheck) where() string { return strings.Join(c.path, "") }

func (c *shapeCheck) wrongType(want string) {
	if c.types == "" {
		c.types = fmt.Sprintf("%s is not %s", strings.TrimPrefix(c.where(), "."), want)
	}
}

func (c *shapeCheck) walk(v any, t reflect.Type) {
	if t.Kind() == reflect.Pointer {
		if v == nil {
			return
		}
		t = t.Elem()
	}
	var ok bool
	switch {
	case t == timeType, t.Kind() == reflect.String && t != numberType:
		if _, ok = v.(string); !ok {
			c.wrongType("a string")
		}
	case t == numberType, t.Kind() == reflect.Int64:
		if _, ok = v.(json.Number); !ok {
			c.wrongType("a number")
		}
	case t.Kind() == reflect.Bool:
		if _, ok = v.(bool); !ok {
			c.wrongType("a boolean")
		}
	case t.Kind() == reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			c.wrongType("an array")
			return
		}
		for i, e := range list {
			c.path = append(c.path, "["+strconv.Itoa(i)+"]")
			c.walk(e, t.Elem())
			c.path = c.path[:len(c.path)-1]
		}
	case t.Kind() == reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			c.wrongType("an object")
			return
		}
		c.walkObject(obj, t)
	default:
		// A type this package never decodes certificates into.
		c.wrongType("decodable")
	}
}

func (c *shapeCheck) walkObject(obj map[string]any, t reflect.Type) {
	ms := membersOf(t)
	for _, m := range ms {
		c.path = append(c.path, "."+m.name)
		if v, present := obj[m.name]; present {
			c.walk(v, t.Field(m.index).Type)
		} else if !m.optional && c.members == "" {
			c.members = fmt.Sprintf("member %q is missing", strings.TrimPrefix(c.where(), "."))
		}
		c.path = c.path[:len(c.path)-1]
	}
	if c.members != "" || len(obj) == len(ms) {
		return // every declared member present: no room for an unknown one
	}
	var unknown []string
	for name := range obj {
		if !slices.ContainsFunc(ms, func(m member) bool { return m.name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		c.members = fmt.Sprintf("unknown member %q", strings.TrimPrefix(c.where()+"."+unknown[0], "."))
	}
}

// fill copies a JSON value that checkShape accepted into dst, so each
// document is scanned once. It reads integers and times the way
// encoding/json does, and returns an error rather than panic on any value.
func fill(v any, dst reflect.Value) error {
	t := dst.Type()
	switch {
	case t == timeType:
		s, _ := v.(string)
		if err := dst.Addr().Interface().(*time.Time).UnmarshalText([]byte(s)); err != nil {
			return fmt.Errorf(": %w", err)
		}
	case t.Kind() == reflect.Pointer:
		if v == nil {
			return nil
		}
		p := reflect.New(t.Elem())
		if err := fill(v, p.Elem()); err != nil {
			return err
		}
		dst.Set(p)
	case t == numberType:
		n, _ := v.(json.Number)
		dst.SetString(string(n))
	case t.Kind() == reflect.String:
		s, _ := v.(string)
		dst.SetString(s)
	case t.Kind() == reflect.Int64:
		n, _ := v.(json.Number)
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf(": %s is not a 64-bit integer", n)
		}
		dst.SetInt(i)
	case t.Kind() == reflect.Bool:
		b, _ := v.(bool)
		dst.SetBool(b)
	case t.Kind() == reflect.Slice:
		list, _ := v.([]any)
		s := reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			if err := fill(e, s.Index(i)); err != nil {
				return fmt.Errorf("[%d]%w", i, err)
			}
		}
		dst.Set(s)
	case t.Kind() == reflect.Struct:
		obj, _ := v.(map[string]any)
		for _, m := range membersOf(t) {
			if e, ok := obj[m.name]; ok {
				if err := fill(e, dst.Field(m.index)); err != nil {
					return fmt.Errorf(".%s%w", m.name, err)
				}
			}
		}
	default:
		return fmt.Errorf(": cannot decode into %s", t)
	}
	return nil
}

// decodeShaped fills dst (a pointer to struct) from obj after checkShape:
// an unknown or missing member gives a members problem, a wrong type or
// unreadable value a types problem.
func decodeShaped(obj map[string]any, dst any) *shapeCheck {
	rv := reflect.ValueOf(dst).Elem()
	if c := checkShape(obj, rv.Type()); c != nil {
		return c
	}
	if err := fill(obj, rv); err != nil {
		// fill builds the path on its way back up: ".a.b[2]: reason".
		return &shapeCheck{types: strings.TrimPrefix(err.Error(), ".")}
	}
	return nil
}
