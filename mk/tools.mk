# Pinned command-line tools the tests run for real, installed into ./bin.

$(BIN)/kustomize:
	GOBIN=$(BIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

.PHONY: tools kustomize kpt crane
kustomize: $(BIN)/kustomize
kpt: $(BIN)/kpt
crane: $(BIN)/crane
tools: $(BIN)/kustomize $(BIN)/kpt $(BIN)/staticcheck
