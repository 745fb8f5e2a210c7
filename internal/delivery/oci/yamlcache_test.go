package oci

import (
	"bytes"
	"testing"
)

// TestRenderedYAMLIsReusedOnlyForTheSameObject: a Writer's pushes build
// each artifact with the YAML of the objects its previous build rendered;
// the bytes are those of a build from scratch after every kind of change
// (objects added, one changed in place under its key, one removed and
// added again), and the cache keeps only the objects of the last build.
func TestRenderedYAMLIsReusedOnlyForTheSameObject(t *testing.T) {
	var cache yamlCache
	a := object("ServiceEntry", "users", "a", map[string]any{"hosts": []any{"a.global"}})
	b := object("VirtualService", "users", "b", map[string]any{"hosts": []any{"b.global"}})
	bChanged := object("VirtualService", "users", "b", map[string]any{"hosts": []any{"b.global", "c.global"}})
	for i, objs := range []Objects{
		set(t, a),
		set(t, a, b),
		set(t, a, bChanged), // same key, other content
		set(t, bChanged),
		set(t, a, bChanged),
		{},
	} {
		got, err := content(objs, &cache)
		if err != nil {
			t.Fatal(err)
		}
		want, err := content(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("build %d: the layer built with the cache differs from one built from scratch", i)
		}
		if len(cache.m) != len(objs) {
			t.Errorf("build %d: the cache keeps %d objects, the artifact has %d", i, len(cache.m), len(objs))
		}
	}
}
