#!/usr/bin/env bash
# Builds the machine-config-operator's machine-os-builder and node
# controller (hack/mco/nodecontroller.go.txt) for make e2e-mco, once per
# source and main: from $MCO_SRC (a checkout of the MCO) when set, else from
# the trimmed tarball $MCO_TARBALL, extracted into $E2E_CACHE keyed by its
# sha256. Prints shell assignments for the suite: E2E_MCO_DIR (the source
# tree, its vendored CRDs), E2E_MCO_BUILDER and E2E_MCO_NODE (binaries), or
# E2E_MCO_SKIP (one line: why not) when there is no source.
set -euo pipefail
: "${E2E_CACHE:?}" "${MCO_TARBALL:?}"
GO=${GO:-go}
main=$(cd "$(dirname "$0")" && pwd)/nodecontroller.go.txt

if [ -n "${MCO_SRC:-}" ]; then
	tree=$(cd "$MCO_SRC" && pwd)
	key=src-$(git -C "$tree" describe --always --dirty --abbrev=12 2>/dev/null || echo unversioned)
elif [ -f "$MCO_TARBALL" ]; then
	key=$(sha256sum "$MCO_TARBALL" | cut -c1-16)
	tree=$E2E_CACHE/mco-$key/src
	if [ ! -f "$tree/go.mod" ]; then
		rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
		tar -xJf "$MCO_TARBALL" -C "$tree.tmp"
		mv "$tree.tmp" "$tree"
	fi
else
	echo "E2E_MCO_SKIP='no machine-config-operator source: $MCO_TARBALL is missing and MCO_SRC is not set (MCO_SRC=path/to/machine-config-operator make e2e-mco runs it)'"
	exit 0
fi
out=$E2E_CACHE/mco-$key
mkdir -p "$out"
builder=$out/machine-os-builder
node=$out/nodecontroller-$(sha256sum "$main" | cut -c1-12)
tags="containers_image_openpgp exclude_graphdriver_devicemapper exclude_graphdriver_btrfs containers_image_ostree_stub"
if [ ! -x "$builder" ]; then
	echo "e2e-mco: building the machine-os-builder from $tree (minutes, once)" >&2
	(cd "$tree" && CGO_ENABLED=0 nice -n 19 "$GO" build -mod=vendor -trimpath -tags "$tags" -o "$builder.tmp" ./cmd/machine-os-builder)
	mv "$builder.tmp" "$builder"
fi
if [ ! -x "$node" ]; then
	echo "e2e-mco: building the node controller from $tree" >&2
	# The main goes into the tree through an overlay: a checkout stays untouched.
	overlay=$out/overlay.json
	printf '{"Replace":{"%s":"%s"}}\n' "$tree/cmd/ocl-e2e-nodecontroller/main.go" "$main" > "$overlay"
	(cd "$tree" && CGO_ENABLED=0 nice -n 19 "$GO" build -mod=vendor -trimpath -tags "$tags" -overlay "$overlay" -o "$node.tmp" ./cmd/ocl-e2e-nodecontroller)
	mv "$node.tmp" "$node"
fi
printf 'E2E_MCO_DIR=%q E2E_MCO_BUILDER=%q E2E_MCO_NODE=%q\n' "$tree" "$builder" "$node"
