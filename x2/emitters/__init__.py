"""Emitters: IR graph -> a model in a target framework. Each runs in a worker
process that imports only its own framework."""
