#!/usr/bin/env bash
# Builds OpenTofu's tofu command from the Go module tools/opentofu pins
# (github.com/opentofu/opentofu, with the one replace of hcl/v2 its own
# go.mod carries), for the acceptance tests that run under OpenTofu
# (mk/opentofu.mk). Like tools/build-binaries.sh, it builds into a cache
# directory keyed by the version, only when the binary is missing, and
# prints the binary's path as the last line of stdout:
#
#   OPENTOFU_BIN=$(tools/build-opentofu.sh | tail -n1)
#
# Usage: tools/build-opentofu.sh [--print-path]
#   --print-path  only print where the binary is (or would be); build nothing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mod="$root/tools/opentofu"

fail() {
	echo "build-opentofu.sh: $*" >&2
	echo "build-opentofu.sh: make test runs a subset of the acceptance tests under OpenTofu and cannot go on without it." >&2
	exit 1
}

command -v go >/dev/null 2>&1 || fail "'go' was not found in PATH; install Go (see go.mod for the version) to build OpenTofu."

version=$(go -C "$mod" list -m -f '{{.Version}}' github.com/opentofu/opentofu) ||
	fail "the OpenTofu version pinned in tools/opentofu/go.mod could not be read (is the module proxy reachable?)."
dir="${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-mesh/opentofu-${version#v}"
bin="$dir/tofu"

if [[ "${1:-}" == "--print-path" ]]; then
	echo "$bin"
	exit 0
fi

if [[ -x "$bin" ]]; then
	echo "tofu: up to date ($bin)" >&2
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
echo "tofu: building OpenTofu $version (cold: 25 min measured on two cores shared with other builds)" >&2
start=$SECONDS
# -mod=mod: the wrapper module's go.sum is tidy, but a Go newer than the
# one that tidied it may want more sums; the build then records them.
# version.dev=no makes it report v1.11.5 rather than a dev build, as
# OpenTofu's release build does.
if ! go -C "$mod" build -mod=mod -trimpath \
	-ldflags "-X github.com/opentofu/opentofu/version.dev=no" \
	-o "$bin.tmp" github.com/opentofu/opentofu/cmd/tofu; then
	rm -f "$bin.tmp"
	fail "OpenTofu $version could not be built (the go build errors are above)."
fi
mv "$bin.tmp" "$bin"
"$bin" version >/dev/null 2>&1 || fail "the OpenTofu just built ($bin) does not run."
echo "tofu: built in $((SECONDS - start))s" >&2
echo "$bin"
