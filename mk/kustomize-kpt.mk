# kustomize and kpt, run for real against bin/jobset-flux (docs/user/kustomize-kpt.md).
#
# test/kustomize is a package of the main module, so `make unit`
# (go test ./...) runs it; it needs the standalone kustomize in bin/.
# test/kpt is its own Go module (it requires github.com/kptdev/kpt for the
# e2e runner, too heavy for the main go.mod). The kpt it runs is bin/kpt,
# built from test/kpt/cmd/kpt at the kpt version test/kpt/go.mod pins
# (v1.0.0-beta.61; `go install github.com/kptdev/kpt@...` cannot build here,
# see that file); a kpt elsewhere on PATH is never used. CGO_ENABLED=0: kpt
# links wasmtime through cgo otherwise, which the tests never use.

KPT_MOD := test/kpt

unit: $(BIN)/kustomize

INTEGRATION_TESTS += test-kpt

.PHONY: test-kpt kpt-expected

# Slow cold (a large binary), nothing when test/kpt's go.mod, go.sum and
# cmd/kpt are unchanged.
$(BIN)/kpt: $(KPT_MOD)/go.mod $(KPT_MOD)/go.sum $(KPT_MOD)/cmd/kpt/main.go
	cd $(KPT_MOD) && CGO_ENABLED=0 go build -o $@ ./cmd/kpt

## test-kpt: kpt fn eval and render of every example and test/kpt/testdata case, each twice.
test-kpt: build $(BIN)/kustomize $(BIN)/kpt
	cd $(KPT_MOD) && PATH="$(BIN):$$PATH" CGO_ENABLED=0 go test -count=1 -timeout 20m $(KPT_TEST_FLAGS) ./...

## kpt-expected: rewrite test/kpt/testdata/**/.expected/{diff.patch,results.yaml} from the current binary (read the diff before committing).
kpt-expected: build $(BIN)/kpt
	cd $(KPT_MOD) && PATH="$(BIN):$$PATH" CGO_ENABLED=0 KPT_E2E_UPDATE_EXPECTED=true go test -count=1 -run TestE2E ./...
