# kustomize and kpt, run for real against bin/jobset-flux (docs/kustomize-kpt.md).
#
# test/kustomize is a package of the main module, so `make unit`
# (go test ./...) runs it; it needs the standalone kustomize in bin/.
# test/kpt is its own Go module (it requires github.com/kptdev/kpt for the
# e2e runner, too heavy for the main go.mod) and runs the kpt on PATH
# (/usr/bin/kpt on the project's machines). CGO_ENABLED=0: kpt links wasmtime
# through cgo otherwise, which the tests never use.

KPT_MOD := test/kpt

unit: $(BIN)/kustomize

INTEGRATION_TESTS += test-kpt

.PHONY: test-kpt kpt-expected

## test-kpt: kpt fn eval and render of every example and test/kpt/testdata case, each twice.
test-kpt: build $(BIN)/kustomize
	cd $(KPT_MOD) && PATH="$(BIN):$$PATH" CGO_ENABLED=0 go test -count=1 -timeout 20m $(KPT_TEST_FLAGS) ./...

## kpt-expected: rewrite test/kpt/testdata/**/.expected/{diff.patch,results.yaml} from the current binary (read the diff before committing).
kpt-expected: build
	cd $(KPT_MOD) && PATH="$(BIN):$$PATH" CGO_ENABLED=0 KPT_E2E_UPDATE_EXPECTED=true go test -count=1 -run TestE2E ./...
