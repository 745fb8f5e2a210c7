#!/usr/bin/env bash
# Builds the kube-apiserver, etcd, Istio validation webhook and Flux
# controller binaries used by the local mesh (internal/localmesh,
# cmd/local-mesh) from their pinned Go modules (tools/apiserver, tools/etcd,
# tools/istio, tools/flux) and copies Istio's and Flux's CRDs next to them.
#
# The binaries land in a cache directory keyed by their versions and are only
# built when missing, so a second run is instant. The directory is printed as
# the last line of stdout, so callers can capture it:
#
#   LOCAL_MESH_BIN=$(tools/build-binaries.sh | tail -n1)
#
# Usage: tools/build-binaries.sh [--print-dir]
#   --print-dir  only print the cache directory; build nothing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if ! command -v go >/dev/null 2>&1; then
	echo "build-binaries.sh: 'go' was not found in PATH; install Go (see go.mod for the version) to build kube-apiserver and etcd" >&2
	exit 1
fi

# modversion DIR MODULE prints the version of MODULE required by the Go module in DIR.
modversion() {
	go -C "$1" list -m -f '{{.Version}}' "$2"
}

k8s_version=$(modversion "$root/tools/apiserver" k8s.io/kubernetes)
etcd_version=$(modversion "$root/tools/etcd" go.etcd.io/etcd/server/v3)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-mesh/k8s-${k8s_version#v}-etcd-${etcd_version#v}"

if [[ "${1:-}" == "--print-dir" ]]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$dir"

# build NAME MODDIR PKG [go build flags...] builds PKG of the module in MODDIR
# into $dir/NAME unless it is already there. It writes to a temporary name
# first so an interrupted build never leaves a truncated binary behind.
build() {
	local name=$1 moddir=$2 pkg=$3
	shift 3
	if [[ -x "$dir/$name" ]]; then
		echo "$name: up to date" >&2
		return
	fi
	echo "$name: building $pkg (cold, on two cores: ~4 min for kube-apiserver, ~30 s for etcd, ~10 min for istio-webhook)" >&2
	local start=$SECONDS
	go -C "$moddir" build "$@" -o "$dir/$name.tmp" "$pkg"
	mv "$dir/$name.tmp" "$dir/$name"
	echo "$name: built in $((SECONDS - start))s" >&2
}

# Stamp the apiserver with its real version, as Kubernetes' own build does;
# otherwise it reports v0.0.0-master.
minor=${k8s_version#v1.}
minor=${minor%%.*}
vpkg=k8s.io/component-base/version
build kube-apiserver "$root/tools/apiserver" k8s.io/kubernetes/cmd/kube-apiserver -trimpath \
	-ldflags "-X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
build etcd "$root/tools/etcd" github.com/mesh-intent/terraform-provider-mesh/tools/etcd -trimpath

# Istio's validation webhook, from the istio.io/istio that tools/istio pins
# (the same code as the simulation and analysis oracles). Its version is
# stamped next to it, so a new pin rebuilds it without touching the API
# server. Cold, it compiles much of istiod: several minutes on two cores.
# The stamp also covers our own sources of the two commands, which change
# more often than the pin.
istio_version="$(modversion "$root/tools/istio" istio.io/istio) $(cat "$root"/tools/istio/go.mod "$root"/tools/istio/webhook/*.go "$root"/tools/istio/analyze-live/*.go | sha256sum | cut -c1-16)"
if [[ "$(cat "$dir/istio-webhook.version" 2>/dev/null)" != "$istio_version" ]]; then
	rm -f "$dir/istio-webhook" "$dir/analyze-live"
fi
# No -trimpath here: the simulation and analysis tests of tools/istio then
# reuse the same compiled istio packages from Go's build cache.
build istio-webhook "$root/tools/istio" ./webhook
# Istio's analyzers against running clusters (istioctl analyze -A).
build analyze-live "$root/tools/istio" ./analyze-live
echo "$istio_version" > "$dir/istio-webhook.version"

# Flux's source-controller and kustomize-controller, for pull delivery
# (internal/localmesh StartFlux), from the versions tools/flux pins, with
# their own stamp so a new Flux pin rebuilds them alone. Cold, both take
# about 11 CPU-minutes (measured: 15 + 11 min wall on two cores shared with
# five other builds, after an aborted first try; see docs/decisions.md); with
# Go's build cache warm, a rebuild after a new stamp only links them.
flux_version="$(cat "$root/tools/flux/go.mod" "$root/tools/flux/go.sum" | sha256sum | cut -c1-16)"
if [[ "$(cat "$dir/flux.version" 2>/dev/null)" != "$flux_version" ]]; then
	rm -f "$dir/source-controller" "$dir/kustomize-controller" "$dir/flux-crds.yaml"
fi
build source-controller "$root/tools/flux" github.com/fluxcd/source-controller -trimpath
build kustomize-controller "$root/tools/flux" github.com/fluxcd/kustomize-controller -trimpath
# Their CRDs ship in the modules (config/crd/bases). kustomize-controller
# watches every source kind, so all of source-controller's CRDs go in.
if [[ ! -f "$dir/flux-crds.yaml" ]]; then
	{
		for mod in github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller; do
			for f in "$(go -C "$root/tools/flux" list -m -f '{{.Dir}}' "$mod")"/config/crd/bases/*.yaml; do
				echo "---"
				cat "$f"
			done
		done
	} > "$dir/flux-crds.yaml.tmp"
	mv "$dir/flux-crds.yaml.tmp" "$dir/flux-crds.yaml"
	echo "flux-crds.yaml: copied from tools/flux's Flux modules" >&2
fi
echo "$flux_version" > "$dir/flux.version"

# The Istio CRDs come from the istio.io/api version the provider requires.
# They are cheap to copy, so refresh them whenever that version changes.
istio_dir=$(go -C "$root" list -m -f '{{.Dir}}' istio.io/api)
crds="$istio_dir/kubernetes/customresourcedefinitions.gen.yaml"
if [[ ! -f "$crds" ]]; then
	echo "build-binaries.sh: $crds not found; run 'go mod download istio.io/api' in $root" >&2
	exit 1
fi
if ! cmp -s "$crds" "$dir/istio-crds.yaml"; then
	install -m 0644 "$crds" "$dir/istio-crds.yaml"
	echo "istio-crds.yaml: copied from $crds" >&2
fi

echo "local mesh binaries are in:" >&2
echo "$dir"
