package gen

import "testing"

func TestRender(t *testing.T) {
	for _, m := range []int{10, 100, 500} {
		s := Generate(m, Clusters([]string{"east", "west", "onprem"}))
		if s.Intents() != m {
			t.Fatalf("M=%d: %d intents", m, s.Intents())
		}
		r, err := s.Render()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("M=%d: %d destinations, %d access, %d traffic; %d writes, %d objects in state, %d distinct objects",
			m, len(s.Destinations), len(s.Access), len(s.Traffic), len(r.Writes), r.Objects(), len(r.Keys()))
	}
}
