package main

import (
	"os"
	"testing"
)

func TestQuietUnlessAsked(t *testing.T) {
	vars := []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_MUX"}
	unset := func() {
		for _, v := range vars {
			t.Setenv(v, "") // restored after the test
			_ = os.Unsetenv(v)
		}
	}

	unset()
	quietUnlessAsked()
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if got := os.Getenv(v); got != "OFF" {
			t.Errorf("no logging asked for: %s = %q, want OFF", v, got)
		}
	}

	for _, asked := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK_FRAMEWORK"} {
		unset()
		t.Setenv(asked, "DEBUG")
		quietUnlessAsked()
		for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO"} {
			if got := os.Getenv(v); got != "" {
				t.Errorf("%s set: %s = %q, want it left alone", asked, v, got)
			}
		}
	}
}
