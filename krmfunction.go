// Package jobsetflux holds the function's metadata file so that tests can
// hold the function to the config schema users read.
package jobsetflux

import _ "embed"

// FunctionDefinition is krmfunction.yaml, the KRMFunctionDefinition with
// the JobSetFlux config schema.
//
//go:embed krmfunction.yaml
var FunctionDefinition []byte
