// Helpers shared by the integration test modules under test/ (kpt, zmq,
// apiserver, image, argocd): each requires this module and replaces it with
// ../testsupport. Standard library only, so it adds nothing to their
// dependency graphs.
module github.com/jobset-flux/jobset-flux/test/testsupport

go 1.26
