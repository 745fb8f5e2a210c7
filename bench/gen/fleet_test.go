package gen

import "testing"

// TestMeasureFleet: a small fleet measurement runs every step to the end
// (a refresh that is not a no-op, or a delete that leaves objects, fails
// it) and counts what it measured.
func TestMeasureFleet(t *testing.T) {
	f, err := MeasureFleet(24, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *f)
	if f.Objects == 0 || f.Planned < f.Objects {
		t.Errorf("objects %d, planned %d: want some, planned at least the translator's", f.Objects, f.Planned)
	}
	if f.ApplyRequests < f.Planned || f.ReadRequests == 0 || f.DeleteRequests == 0 {
		t.Errorf("requests: apply %d (planned %d), read %d, delete %d", f.ApplyRequests, f.Planned, f.ReadRequests, f.DeleteRequests)
	}
	if f.Touched != 4 {
		t.Errorf("%d of 4 clusters received requests", f.Touched)
	}
}
