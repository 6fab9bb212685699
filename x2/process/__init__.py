"""Process machinery: every framework step in its own worker process
(isolation, worker), scratch space, and the executors that run many
conversions (batch)."""
