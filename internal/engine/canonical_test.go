package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// pruneEmpty is the reference canonicalJSON is held to: empty objects
// dropped (the server records no owned field for an empty object we send,
// a deny-all policy's spec: {}, so no digest may depend on one), never
// inside lists; the result is what json.Marshal writes of it.
func pruneEmpty(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		val = pruneEmpty(val)
		if sub, ok := val.(map[string]any); ok && len(sub) == 0 {
			continue
		}
		out[k] = val
	}
	return out
}

// TestCanonicalJSONIsMarshal holds canonicalJSON to the bytes
// json.Marshal(pruneEmpty(v)) writes, on generated values with every
// kind of leaf a manifest holds and strings that need escaping: any
// difference would change digests in users' states.
func TestCanonicalJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	strs := []string{"", "a", "spec", "istio-system", "<b>&amp;", "quote\"back\\slash", "tab\tnew\nline\r\b\f\x01", "é ünïcode", "\u2028\u2029", string([]byte{0xff, 'x'}), "\x7f"}
	nums := []float64{0, 1, -1, 3.5, 1e-7, 1e21, 123456789, 1e20, -2.5e-9, math.MaxInt64, 0.1}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.Intn(11); {
		case k < 3 && depth < 5:
			if r.Intn(8) == 0 {
				return map[string]any(nil)
			}
			m := map[string]any{}
			for range r.Intn(5) {
				m[strs[r.Intn(len(strs))]+strs[r.Intn(len(strs))]] = value(depth + 1)
			}
			return m
		case k < 5 && depth < 5:
			if r.Intn(8) == 0 {
				return []any(nil)
			}
			var l []any
			for range r.Intn(4) {
				l = append(l, value(depth+1))
			}
			if l == nil {
				l = []any{}
			}
			return l
		case k == 5:
			return nums[r.Intn(len(nums))]
		case k == 6:
			return r.Intn(2) == 0
		case k == 7:
			return nil
		case k == 8:
			return int64(r.Intn(1000)) // as unstructured objects hold numbers
		case k == 9:
			return map[string]string{"x": strs[r.Intn(len(strs))]}
		default:
			return strs[r.Intn(len(strs))]
		}
	}
	for i := range 20000 {
		v := value(0)
		want, err := json.Marshal(pruneEmpty(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := canonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d: canonicalJSON wrote\n%s\njson.Marshal(pruneEmpty(v)):\n%s", i, got, want)
		}
	}
	if _, err := canonicalJSON(map[string]any{"x": math.NaN()}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN: %v, want encoding/json's error", err)
	}
}
