package extract

import (
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// valueKind says where a column's value in a statement comes from.
type valueKind uint8

const (
	valUnset   valueKind = iota // the column is not written
	valNull                     // NULL literal
	valConst                    // a literal, kept in text form
	valParam                    // $n
	valDefault                  // DEFAULT
	valExpr                     // anything else: only the database knows the value
)

// value is the statement-time description of one column value: enough to
// compute the value at execution time from the bound parameters, and no
// more (Analysis must not hold on to the statement text).
type value struct {
	kind  valueKind
	text  string // valConst
	param int    // valParam: 1-based
	oid   uint32 // type named by a cast ($1::uuid), 0 if none
}

// valueOf describes an expression used as a column value.
func valueOf(n *pg.Node) value {
	switch {
	case n == nil:
		return value{kind: valExpr}
	case n.GetAConst() != nil:
		c := n.GetAConst()
		if c.Isnull {
			return value{kind: valNull}
		}
		return value{kind: valConst, text: constText(c)}
	case n.GetParamRef() != nil:
		return value{kind: valParam, param: int(n.GetParamRef().Number)}
	case n.GetSetToDefault() != nil:
		return value{kind: valDefault}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		v := valueOf(tc.Arg)
		if v.kind == valConst || v.kind == valParam {
			// The outermost cast wins: $1::text::jsonb arrives as whatever
			// the client bound, but the outer type says how to read it when
			// the client did not say.
			if oid := typeOID(tc.TypeName); oid != 0 {
				v.oid = oid
			}
		}
		return v
	}
	return value{kind: valExpr}
}

// constText is a literal's text form, as PostgreSQL's input function for the
// destination type would receive it.
func constText(c *pg.A_Const) string {
	switch {
	case c.GetSval() != nil:
		return c.GetSval().Sval
	case c.GetIval() != nil:
		return strconv.FormatInt(int64(c.GetIval().Ival), 10)
	case c.GetFval() != nil:
		return c.GetFval().Fval
	case c.GetBoolval() != nil:
		return strconv.FormatBool(c.GetBoolval().Boolval)
	case c.GetBsval() != nil:
		return c.GetBsval().Bsval
	}
	return ""
}

// Type OIDs from PostgreSQL's pg_type.dat that extract decodes in binary.
const (
	oidName      = 19
	oidInt8      = 20
	oidInt2      = 21
	oidInt4      = 23
	oidText      = 25
	oidJSON      = 114
	oidBpchar    = 1042
	oidVarchar   = 1043
	oidUUID      = 2950
	oidJSONB     = 3802
	oidNameArr   = 1003
	oidInt2Arr   = 1005
	oidInt4Arr   = 1007
	oidTextArr   = 1009
	oidBpcharArr = 1014
	oidVchArr    = 1015
	oidInt8Arr   = 1016
	oidJSONArr   = 199
	oidUUIDArr   = 2951
	oidJSONBArr  = 3807
)

var typeOIDs = map[string][2]uint32{ // name → {scalar, array}
	"name":              {oidName, oidNameArr},
	"int8":              {oidInt8, oidInt8Arr},
	"bigint":            {oidInt8, oidInt8Arr},
	"int2":              {oidInt2, oidInt2Arr},
	"smallint":          {oidInt2, oidInt2Arr},
	"int4":              {oidInt4, oidInt4Arr},
	"int":               {oidInt4, oidInt4Arr},
	"integer":           {oidInt4, oidInt4Arr},
	"text":              {oidText, oidTextArr},
	"json":              {oidJSON, oidJSONArr},
	"bpchar":            {oidBpchar, oidBpcharArr},
	"char":              {oidBpchar, oidBpcharArr},
	"varchar":           {oidVarchar, oidVchArr},
	"character varying": {oidVarchar, oidVchArr},
	"uuid":              {oidUUID, oidUUIDArr},
	"jsonb":             {oidJSONB, oidJSONBArr},
}

// typeOID maps a cast's type name to its OID, 0 when extract does not know
// the type.
func typeOID(tn *pg.TypeName) uint32 {
	if tn == nil || len(tn.Names) == 0 {
		return 0
	}
	s := tn.Names[len(tn.Names)-1].GetString_()
	if s == nil {
		return 0
	}
	o, ok := typeOIDs[s.Sval]
	if !ok {
		return 0
	}
	if len(tn.ArrayBounds) > 0 {
		return o[1]
	}
	return o[0]
}
