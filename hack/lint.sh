#!/usr/bin/env bash
# gofmt, go vet and staticcheck in every Go module of the repository, each
# named as it goes. The modules are found afresh (find . -name go.mod), so a
# new one is linted without being listed anywhere.
#
#   hack/lint.sh STATICCHECK
#
# go vet covers every package. staticcheck covers every package but the
# upstream mains below: each is a few lines of ours that call an upstream
# project's own main (Kubernetes, etcd, CoreDNS, Argo CD), and staticcheck
# would analyse the thousands of upstream packages behind it from source, in
# a cache of its own, for nothing it could report on our lines. Cold, that
# was most of `make lint`'s time (docs/contributing/development.md).
#
# First, every relative link of the Markdown (README.md, docs/, examples/...)
# must resolve, anchors included (hack/checklinks): a page moved under docs/
# cannot leave a link behind.
set -euo pipefail
cd "$(dirname "$0")/.."
staticcheck=$(realpath "${1:?usage: hack/lint.sh STATICCHECK}")

echo "lint: Markdown links"
go run ./hack/checklinks .

# Directories (from the repository root) of the upstream mains; a directory
# that no longer exists is an error, so this list cannot go stale unseen.
upstream_mains=(
  hack/kube/coredns
  test/apiserver/cmd/etcd
  test/apiserver/cmd/kube-apiserver
  test/apiserver/cmd/kube-controller-manager
  test/apiserver/cmd/kube-scheduler
  test/apiserver/cmd/kubectl
  test/apiserver/cmd/kubelet
  test/argocd/cmd/argocd-cmp-server
)
root=$PWD
for d in "${upstream_mains[@]}"; do
  [[ -f $d/main.go ]] || { echo "lint: upstream main $d/main.go is gone: update hack/lint.sh" >&2; exit 1; }
done

is_upstream_main() {
  local d
  for d in "${upstream_mains[@]}"; do
    [[ $1 == "$root/$d" ]] && return 0
  done
  return 1
}

modules=$(find . -name go.mod -not -path './.git/*' -not -path './bin/*' -not -path './_out/*' -printf '%h\n' | sort)
for m in $modules; do
  # A module with no packages matches nothing (a warning, exit 0); a module
  # that does not load is an error.
  dirs=$(cd "$m" && go list -f '{{.Dir}}' ./... 2>/dev/null) || { echo "lint: $m: go list failed" >&2; (cd "$m" && go list ./...); exit 1; }
  if [[ -z $dirs ]]; then
    echo "lint: $m: no Go packages (a go.mod that only pins tools), nothing to lint"
    continue
  fi
  echo "lint: $m"
  # bin/ and _out/ hold vendored and generated trees that are not ours.
  unformatted=$(find "$m" -name '*.go' -not -path '*/.git/*' -not -path '*/_out/*' -not -path '*/bin/*' -print0 | xargs -0 gofmt -l)
  if [[ -n $unformatted ]]; then
    echo "$unformatted"
    echo "gofmt: files above (in $m) need formatting" >&2
    exit 1
  fi
  checked=()
  for d in $dirs; do
    if is_upstream_main "$d"; then
      echo "lint: ${d#"$root"/}: upstream main, go vet only"
    else
      checked+=("$d")
    fi
  done
  (cd "$m" && go vet ./...) || { echo "lint: $m failed" >&2; exit 1; }
  if ((${#checked[@]})); then
    (cd "$m" && "$staticcheck" "${checked[@]}") || { echo "lint: $m failed" >&2; exit 1; }
  fi
done
