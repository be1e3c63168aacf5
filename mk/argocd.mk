# Argo CD config management plugin (deploy/argocd), tested against the real
# argocd-cmp-server. The server is built from the wrapper module test/argocd,
# which pins github.com/argoproj/argo-cd/v3 and repeats its replace directives.
# A cold build downloads ~850 MB of modules and needs ~1.3 GB of memory.

ARGOCD_MODULE := test/argocd

INTEGRATION_TESTS += test-argocd

$(BIN)/argocd-cmp-server: $(ARGOCD_MODULE)/go.mod $(ARGOCD_MODULE)/go.sum $(ARGOCD_MODULE)/cmd/argocd-cmp-server/main.go
	cd $(ARGOCD_MODULE) && go build -o $@ ./cmd/argocd-cmp-server

## test-argocd: the plugin (plugin.yaml + jobset-flux-cmp) served by the real
## argocd-cmp-server, rendering every example through kustomize and jobset-flux.
.PHONY: test-argocd
test-argocd: build $(BIN)/kustomize $(BIN)/argocd-cmp-server
	cd $(ARGOCD_MODULE) && go test -count=1 -timeout 20m ./...
