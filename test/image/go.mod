// Tests of the published container image: they run the image with docker,
// kpt and kustomize. Their own module (standard library only), so that
// "go test ./..." at the repository root never needs a container engine.
module github.com/jobset-flux/jobset-flux/test/image

go 1.26.0

require github.com/jobset-flux/jobset-flux/test/testsupport v0.0.0

replace github.com/jobset-flux/jobset-flux/test/testsupport => ../testsupport
