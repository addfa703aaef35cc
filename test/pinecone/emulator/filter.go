package emulator

import (
	"fmt"
	"slices"
	"sort"
)

// matcher reports whether a record's metadata passes a filter.
type matcher func(metadata map[string]any) bool

// compileFilter checks a Pinecone metadata filter and returns its matcher;
// a nil or empty filter matches everything. The language:
// {"field": value} (same as $eq), {"field": {"$op": arg, ...}} with $eq $ne
// $in $nin $gt $gte $lt $lte $exists, and {"$and"|"$or": [filter, ...]}.
// A list-valued field matches $eq/$in when any element does, and $ne/$nin
// when none does; a missing field matches $ne and $nin.
func compileFilter(filter map[string]any) (matcher, error) {
	m, err := compileAnd(filter)
	if err != nil {
		return nil, errorf(InvalidArgument, "invalid filter: %v", err)
	}
	return m, nil
}

func compileAnd(filter map[string]any) (matcher, error) {
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []matcher
	for _, k := range keys {
		var m matcher
		var err error
		switch k {
		case "$and", "$or":
			m, err = compileLogical(k, filter[k])
		default:
			if len(k) > 0 && k[0] == '$' {
				return nil, fmt.Errorf("unknown operator %q at the top of a filter (want a field name, $and or $or)", k)
			}
			m, err = compileField(k, filter[k])
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, m)
	}
	return func(md map[string]any) bool {
		for _, p := range parts {
			if !p(md) {
				return false
			}
		}
		return true
	}, nil
}

func compileLogical(op string, arg any) (matcher, error) {
	list, ok := arg.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%s takes a non-empty list of filters", op)
	}
	var parts []matcher
	for _, e := range list {
		sub, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s takes a list of filter objects, got %T", op, e)
		}
		m, err := compileAnd(sub)
		if err != nil {
			return nil, err
		}
		parts = append(parts, m)
	}
	isOr := op == "$or"
	return func(md map[string]any) bool {
		for _, p := range parts {
			if p(md) == isOr {
				return isOr
			}
		}
		return !isOr
	}, nil
}

func compileField(name string, cond any) (matcher, error) {
	ops, ok := cond.(map[string]any)
	if !ok {
		ops = map[string]any{"$eq": cond}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("field %q has an empty condition", name)
	}
	var parts []func(v any, present bool) bool
	for op, arg := range ops {
		p, err := compileOperator(name, op, arg)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return func(md map[string]any) bool {
		v, present := md[name]
		for _, p := range parts {
			if !p(v, present) {
				return false
			}
		}
		return true
	}, nil
}

func compileOperator(name, op string, arg any) (func(v any, present bool) bool, error) {
	switch op {
	case "$eq", "$ne":
		if !isScalar(arg) {
			return nil, fmt.Errorf("%s on field %q takes a string, number or boolean, got %T", op, name, arg)
		}
		want := op == "$eq"
		return func(v any, present bool) bool { return present && contains(v, []any{arg}) == want || !present && !want }, nil
	case "$in", "$nin":
		set, ok := arg.([]any)
		if !ok {
			return nil, fmt.Errorf("%s on field %q takes a list of strings, numbers or booleans, got %T", op, name, arg)
		}
		for _, e := range set {
			if !isScalar(e) {
				return nil, fmt.Errorf("%s on field %q takes a list of strings, numbers or booleans, got a %T in it", op, name, e)
			}
		}
		want := op == "$in"
		return func(v any, present bool) bool { return present && contains(v, set) == want || !present && !want }, nil
	case "$gt", "$gte", "$lt", "$lte":
		bound, ok := arg.(float64)
		if !ok {
			return nil, fmt.Errorf("%s on field %q takes a number, got %T", op, name, arg)
		}
		return func(v any, _ bool) bool {
			x, ok := v.(float64)
			if !ok {
				return false
			}
			switch op {
			case "$gt":
				return x > bound
			case "$gte":
				return x >= bound
			case "$lt":
				return x < bound
			}
			return x <= bound
		}, nil
	case "$exists":
		want, ok := arg.(bool)
		if !ok {
			return nil, fmt.Errorf("$exists on field %q takes a boolean, got %T", name, arg)
		}
		return func(_ any, present bool) bool { return present == want }, nil
	}
	return nil, fmt.Errorf("unknown operator %q on field %q (supported: $eq $ne $in $nin $gt $gte $lt $lte $exists)", op, name)
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, float64, bool:
		return true
	}
	return false
}

// contains reports whether v, or any element of v when it is a list, equals
// one of set.
func contains(v any, set []any) bool {
	if list, ok := v.([]any); ok {
		return slices.ContainsFunc(list, func(e any) bool { return slices.Contains(set, e) })
	}
	return slices.Contains(set, v)
}
