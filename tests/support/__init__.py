"""Test helpers shared by the integration, e2e and benchmark code."""
