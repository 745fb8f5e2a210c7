package gen

import "testing"

// TestMeasurePublish: a small publishing measurement on pull clusters,
// traffic policies' composed VirtualServices included, runs to the end (the floor's artifacts have the digests the engine
// published; a refresh finds what apply returned) and counts one manifest
// read per artifact for a refresh of every intent.
func TestMeasurePublish(t *testing.T) {
	p, err := MeasurePublish(24, []string{"east", "west", "onprem"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *p)
	if p.Objects == 0 || p.Bytes == 0 || p.Pushes == 0 || p.FloorRequests == 0 || p.Traffic == 0 {
		t.Errorf("nothing measured: %+v", *p)
	}
	if p.RefreshManifests != 1 {
		t.Errorf("a refresh of every intent read a cluster's artifact manifest %d times, want 1", p.RefreshManifests)
	}
}
