"""Frontends: a source model -> the shared IR. Each runs in a worker process
that imports only its own framework."""
