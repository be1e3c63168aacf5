// Package kpt proves jobset-flux where kpt users run it, with the real kpt
// (bin/kpt, built by `make bin/kpt` from cmd/kpt at the kpt version this
// module's go.mod pins) running the real bin/jobset-flux as an exec function:
//
//   - e2e_test.go runs kpt's own e2e runner (github.com/kptdev/kpt/pkg/test/runner)
//     over every example package and the packages in testdata/cases, each
//     case twice, the second run being the idempotency gate;
//   - kpt_test.go shells out to kpt for what the runner cannot express:
//     where generated files land, repeated renders after an edit, the
//     results directory of a failing package, the example packages exactly
//     as shipped.
//
// This is its own Go module so that kpt's heavy dependency tree stays out of
// the main go.mod. Run it with `make test-kpt`, which builds the binaries first.
package kpt
