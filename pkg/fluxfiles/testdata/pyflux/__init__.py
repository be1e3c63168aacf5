"""Stub of the Flux Python bindings for the sandbox tests: a handle that
connects to nothing."""


class Flux:
    """Stands in for flux.Flux."""

    def rpc(self, topic, *args, **kwargs):
        """Answers every request at once, as a broker in the run state
        answers state-machine.wait."""
        return _Answered()


class _Answered:
    """Stands in for a flux.future.Future that has its answer."""

    def get(self):
        return {}
