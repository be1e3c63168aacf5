"""Stub of the Flux Python bindings for the sandbox tests: a handle that
connects to nothing."""


class Flux:
    """Stands in for flux.Flux."""
