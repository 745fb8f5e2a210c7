package engine

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// canonicalJSON is what digestOf hashes: v without empty objects (as
// pruneEmpty drops them), as JSON with sorted keys. It writes exactly the
// bytes json.Marshal(pruneEmpty(v)) writes (TestCanonicalJSONIsMarshal),
// without encoding/json's reflection and the copies pruning makes: the
// values of a manifest (maps, lists, strings, float64 numbers, booleans,
// nulls) are written here, anything else by encoding/json. It was half of
// engine.Plan's allocations (docs/performance.md).
func canonicalJSON(v any) ([]byte, error) {
	return appendCanonical(make([]byte, 0, 512), v, true)
}

// appendCanonical appends v's JSON. prune drops empty objects from maps,
// as pruneEmpty does; it never descends into lists.
func appendCanonical(b []byte, v any, prune bool) ([]byte, error) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil && !prune {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		first := true
		for _, k := range keys {
			mark := len(b)
			if !first {
				b = append(b, ',')
			}
			var err error
			if b, err = appendString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			val := x[k]
			_, isMap := val.(map[string]any)
			start := len(b)
			if b, err = appendCanonical(b, val, prune); err != nil {
				return nil, err
			}
			if prune && isMap && len(b) == start+2 {
				b = b[:mark] // an object left empty: dropped
				continue
			}
			first = false
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e, false); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, x)
	case bool:
		return strconv.AppendBool(b, x), nil
	case nil:
		return append(b, "null"...), nil
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return appendFloat(b, x), nil
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// appendString appends s quoted. Strings of plain printable ASCII (what
// manifests hold) are written as they are; any other goes through
// encoding/json, which escapes HTML characters, control characters,
// invalid UTF-8 and U+2028/U+2029 its own way.
func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(b, raw...), nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// appendFloat writes f as encoding/json does (ES6 number formatting).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		n := len(b)
		if n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
