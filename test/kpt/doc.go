// Package kpt proves jobset-flux where kpt users run it, with the real kpt
// (bin/kpt, built by `make bin/kpt` from cmd/kpt at the kpt version this
// module's go.mod pins) running the real bin/jobset-flux as an exec function:
//
//   - e2e_test.go runs kpt's own e2e runner (github.com/kptdev/kpt/pkg/test/runner)
//     over every example package and the packages in testdata/cases, each
//     case twice, the second run being the idempotency gate;
//     (rerun_test.go then runs each twice more: the runner compares only
//     the first run's results, so the second run's are checked there);
//   - kpt_test.go shells out to kpt for what the runner cannot express:
//     where generated files land, repeated renders after an edit, the
//     results directory of a failing package, the example packages exactly
//     as shipped.
//
// Where the example cases live. The KRM functions catalog
// (kptdev/krm-functions-catalog, tests/README.md) puts a case's .expected
// directly in the example, examples/<name>/.expected, one case per example,
// and its tests/e2etest scans the tree for them. Here each example is two
// cases, kpt fn render (the Kptfile pipeline) and kpt fn eval (--exec with
// --fn-config), and one directory holds one .expected; so the cases stay in
// testdata/examples/<name>/{render,eval}/.expected and TestE2E stages each
// over a copy of examples/<name>. Splitting one mode into examples/ would
// put an example's two cases in two trees, and the .expected a user gets
// with `kpt pkg get` would then test only one of the two ways to run it.
// Each case has every file of the catalog's layout (config.yaml,
// diff.patch, results.yaml), and TestE2E fails on a case without one.
//
// This is its own Go module so that kpt's heavy dependency tree stays out of
// the main go.mod. Run it with `make test-kpt`, which builds the binaries first.
package kpt
