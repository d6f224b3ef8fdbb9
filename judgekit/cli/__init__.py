"""The thin command-line shell. Nothing else in judgekit imports this package."""
