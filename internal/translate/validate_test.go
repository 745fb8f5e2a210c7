package translate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidDNSLabel is a hand-written loop (the translator calls it for every
// endpoint); Kubernetes' own validator is the reference.
func TestValidDNSLabelAgreesWithKubernetes(t *testing.T) {
	cases := []string{"", "a", "east", "east-1", "-east", "east-", "East", "e_st", "e.st", "1east", "e--t", "é", "a b",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "a" + strings.Repeat("-", 61) + "a", "onprem\n"}
	for _, s := range cases {
		want := len(validation.IsDNS1123Label(s)) == 0
		if got := ValidDNSLabel(s); got != want {
			t.Errorf("ValidDNSLabel(%q) = %v, Kubernetes says %v", s, got, want)
		}
	}
}
