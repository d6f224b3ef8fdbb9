"""Judging at scale through Batch API files: OpenAI's Batch API or ``vllm run-batch``.

- :mod:`.lines`: request lines out, output/error lines in (the format both engines use),
  files split at the documented limits;
- :mod:`.prepare`: the calls a run would make, as input files recorded in the store;
- :mod:`.collect`: output and error lines stored as judgments, once per call;
- :mod:`.remote`: upload, create, poll and download through the ``openai`` client.

A batch judgment has the cache key, fields and categories of a live one; only
its run (``batch:<id>``) says where it came from.
"""
