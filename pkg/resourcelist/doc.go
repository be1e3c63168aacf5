// Package resourcelist is the function's input and output: it reads a
// KRM ResourceList from stdin (parse.go) or builds one from plain YAML
// files in standalone mode (files.go), writes it back (encode.go), and
// prints its results for a person (results.go).
//
// Reading refuses what the SDK's parser silently gets wrong; writing gives
// the SDK's bytes in a fraction of its time and memory; printing keeps
// every result on one visible line, whatever the input holds.
package resourcelist
