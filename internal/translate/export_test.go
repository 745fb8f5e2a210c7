package translate

// ManifestByJSON is manifestByJSON, for the tests of package translate_test.
func ManifestByJSON(o Object) (map[string]any, error) { return manifestByJSON(o.Resource) }

// ManifestRaw is manifest, for the tests of package translate_test.
func (o Object) ManifestRaw() (map[string]any, error) { return o.manifest() }
