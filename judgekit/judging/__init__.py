"""The engine that makes judge calls: work units, cache keys, runner, probes, local judge."""
