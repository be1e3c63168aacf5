package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goListDeps lists the packages pkg is built from.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// The binary links no schema validator: kube-openapi's validation
// packages (and kyaml's framework, which pulls them in) would cost every
// render milliseconds of start-up in package initialisation alone. The config is
// read by the settings table instead; pkg/transform/schema_test.go holds
// that to krmfunction.yaml's schema. The one validation package the KRM
// SDK itself needs (the OpenAPI types, validation/spec) is allowed.
func TestNoSchemaValidatorLinked(t *testing.T) {
	sdk := goListDeps(t, "github.com/kptdev/krm-functions-sdk/go/fn")
	deps := goListDeps(t, ".")
	if !slices.Contains(deps, "github.com/kptdev/krm-functions-sdk/go/fn") {
		t.Fatalf("go list -deps . does not list the KRM SDK: %q", deps)
	}
	for _, dep := range deps {
		validator := strings.HasPrefix(dep, "k8s.io/kube-openapi/pkg/validation/") ||
			strings.HasPrefix(dep, "k8s.io/kube-openapi/pkg/internal/third_party/govalidator") ||
			dep == "sigs.k8s.io/kustomize/kyaml/fn/framework"
		if validator && !slices.Contains(sdk, dep) {
			t.Errorf("the function links %s", dep)
		}
	}
	for _, dep := range []string{"k8s.io/kube-openapi/pkg/validation/validate", "k8s.io/kube-openapi/pkg/validation/strfmt"} {
		if slices.Contains(sdk, dep) {
			t.Errorf("the KRM SDK itself now links %s: this test no longer proves anything about it", dep)
		}
	}
}

// The binary links neither k8s.io/api nor the JobSet API: the function
// reads and writes YAML nodes and needs only a few of their strings
// (pkg/jobset's constants, compared with the typed originals in
// TestAPIConstants). Their package initialisation, with the protobuf,
// CBOR, JSON and OpenAPI machinery they pull in, would be a large share of
// every run's start-up and of the binary (docs/contributing/performance.md). Tests use
// them as typed objects.
func TestNoTypedAPILinked(t *testing.T) {
	for _, dep := range goListDeps(t, ".") {
		if strings.HasPrefix(dep, "k8s.io/api/") || strings.HasPrefix(dep, "sigs.k8s.io/jobset/") {
			t.Errorf("the function links %s", dep)
		}
	}
}
