"""Stub of flux.resource.journal for the sandbox tests: the resource
journal is the JSON lines of STUB_EVENTS, then its end."""

import json
import os


class _Event:
    def __init__(self, entry):
        self.name = entry["name"]
        self.context = entry.get("context", {})


class ResourceJournalConsumer:
    """Stands in for the real consumer: start, then poll until None."""

    def __init__(self, handle):
        lines = os.environ.get("STUB_EVENTS", "").splitlines()
        self.events = [_Event(json.loads(line)) for line in lines if line.strip()]

    def start(self):
        return self

    def poll(self):
        return self.events.pop(0) if self.events else None
