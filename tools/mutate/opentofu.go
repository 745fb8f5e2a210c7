package main

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// openTofuEnv is the environment of a mutation caught by the acceptance
// tests under OpenTofu (mk/opentofu.mk): TF_ACC, and the OpenTofu binary
// tools/build-opentofu.sh caches (make test builds it before make
// mutate). When the script cannot say where it is, the value says so, and
// the tests fail to start: the mutation shows as BROKEN, never as caught.
func openTofuEnv() []string {
	env := []string{"TF_ACC=1"}
	root, err := repoRoot()
	if err != nil {
		return append(env, "MESH_ACC_OPENTOFU=unknown: "+err.Error())
	}
	out, err := exec.Command(filepath.Join(root, "tools", "build-opentofu.sh"), "--print-path").Output()
	if err != nil {
		return append(env, "MESH_ACC_OPENTOFU=unknown: tools/build-opentofu.sh --print-path: "+err.Error())
	}
	return append(env, "MESH_ACC_OPENTOFU="+strings.TrimSpace(string(out)))
}
