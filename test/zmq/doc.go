// Package zmq proves with the real libzmq (through cgo) that every CURVE
// certificate jobset-flux produces is one a Flux broker accepts: the keys
// decode with zmq_z85_decode, zmq_curve_public of the secret key is the
// public key, the file follows Flux's certificate parser rules, and two
// ZeroMQ sockets complete a CURVE handshake and exchange a message with it.
//
// It is its own module so that cgo and libzmq stay out of the function's
// build (which is CGO_ENABLED=0). Run it with `make test-zmq`.
package zmq
