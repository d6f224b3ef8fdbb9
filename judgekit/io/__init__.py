"""Files in and out: items, human labels and judge verdicts, each turned into the domain types."""
